import { Config, Redacted } from "effect"

/** How to reach the broker and how the session behaves. Every field but `url` has a default. */
export interface MqttOptions {
  /** `mqtt://host:port` or `mqtts://host:port`. Credentials in the URL are never logged. */
  readonly url: string
  /** The connection's client id is `{clientIdBase}-{random}` (default base `microdcs`). */
  readonly clientIdBase?: string | undefined
  /**
   * An exact client id instead of a random suffix. Only for a persistent session that must be
   * resumed by the same instance after a restart; two live connections with one id take over
   * each other's session, so make it unique per instance and role.
   */
  readonly clientId?: string | undefined
  readonly username?: string | undefined
  readonly password?: Redacted.Redacted<string> | undefined
  /**
   * Clean start (default true). With `false` and a session expiry, the broker keeps the
   * subscriptions and every unacknowledged QoS 1 message while the client is away.
   */
  readonly clean?: boolean | undefined
  /** How long the broker keeps the session after a disconnect, in seconds (default 0: ends with the connection). */
  readonly sessionExpirySeconds?: number | undefined
  readonly keepaliveSeconds?: number | undefined
  /** Time for one connection attempt, and for the first connection as a whole (default 10 s). */
  readonly connectTimeoutMs?: number | undefined
  /** First delay before a reconnect (default 500 ms); doubles per failed attempt up to `reconnectMaxMs`. */
  readonly reconnectMinMs?: number | undefined
  /** Cap of the reconnect delay (default 15 s). */
  readonly reconnectMaxMs?: number | undefined
  /** Largest payload accepted or sent (default 256 KiB). */
  readonly maxPayloadBytes?: number | undefined
  /** A QoS 1 publish without PUBACK after this long fails with `timeout` (default 10 s). */
  readonly publishTimeoutMs?: number | undefined
  /**
   * How many unacknowledged QoS 1 messages the broker may have in flight to us (MQTT 5 Receive
   * Maximum; default: the broker's own limit, 20 in mosquitto). Messages waiting for `ack` count.
   */
  readonly receiveMaximum?: number | undefined
}

export const mqttDefaults = {
  clientIdBase: "microdcs",
  clean: true,
  sessionExpirySeconds: 0,
  keepaliveSeconds: 30,
  connectTimeoutMs: 10_000,
  reconnectMinMs: 500,
  reconnectMaxMs: 15_000,
  publishTimeoutMs: 10_000
} as const

/**
 * Reads {@link MqttOptions} from the environment: `MQTT_URL` (required), `MQTT_CLIENT_ID_BASE`,
 * `MQTT_USERNAME`, `MQTT_PASSWORD`, `MQTT_CLEAN`, `MQTT_SESSION_EXPIRY_SECONDS`,
 * `MQTT_KEEPALIVE_SECONDS`, `MQTT_CONNECT_TIMEOUT_MS`, `MQTT_MAX_PAYLOAD_BYTES`.
 */
export const mqttOptionsConfig: Config.Config<MqttOptions> = Config.all({
  url: Config.string("MQTT_URL").pipe(
    Config.validate({ message: "expected mqtt://host:port or mqtts://host:port", validation: (s) => /^(mqtts?|tcp|ssl|wss?):\/\/./.test(s) })
  ),
  clientIdBase: Config.string("MQTT_CLIENT_ID_BASE").pipe(Config.withDefault(mqttDefaults.clientIdBase)),
  username: Config.option(Config.string("MQTT_USERNAME")),
  password: Config.option(Config.redacted("MQTT_PASSWORD")),
  clean: Config.boolean("MQTT_CLEAN").pipe(Config.withDefault(mqttDefaults.clean)),
  sessionExpirySeconds: Config.integer("MQTT_SESSION_EXPIRY_SECONDS").pipe(Config.withDefault(mqttDefaults.sessionExpirySeconds)),
  keepaliveSeconds: Config.integer("MQTT_KEEPALIVE_SECONDS").pipe(Config.withDefault(mqttDefaults.keepaliveSeconds)),
  connectTimeoutMs: Config.integer("MQTT_CONNECT_TIMEOUT_MS").pipe(Config.withDefault(mqttDefaults.connectTimeoutMs)),
  maxPayloadBytes: Config.integer("MQTT_MAX_PAYLOAD_BYTES").pipe(Config.withDefault(256 * 1024))
}).pipe(
  Config.map((c) => ({
    ...c,
    username: c.username._tag === "Some" ? c.username.value : undefined,
    password: c.password._tag === "Some" ? c.password.value : undefined
  }))
)

/** The URL with any user and password removed, for logs and errors. */
export const safeUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    parsed.username = ""
    parsed.password = ""
    return parsed.toString()
  } catch {
    return "(unparsable url)"
  }
}

/** Reconnect delay after `attempt` failed attempts: doubling from min, capped, with jitter (half to full). */
export const reconnectDelay = (attempt: number, minMs: number, maxMs: number, random: () => number = Math.random): number =>
  Math.max(minMs, Math.round(Math.min(maxMs, minMs * 2 ** Math.min(attempt, 30)) * (0.5 + random() / 2)))
