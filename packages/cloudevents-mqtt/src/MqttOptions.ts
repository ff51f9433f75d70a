import { Config, Effect, Redacted, Schema, SchemaIssue } from "effect"
import { DEFAULT_MAX_PAYLOAD_BYTES } from "./Binary.js"

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
  /** PEM of the CA that signed the broker's certificate (default: the system CAs), for mqtts://. */
  readonly tlsCa?: string | Buffer | undefined
  /** PEM of a client certificate and its key, for brokers that ask for one (`require_certificate`). */
  readonly tlsCert?: string | Buffer | undefined
  readonly tlsKey?: string | Buffer | undefined
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
  /**
   * Largest packet the broker may send us (MQTT 5 Maximum Packet Size; default twice
   * `maxPayloadBytes` plus 64 KiB for the topic and properties). The broker drops a larger message
   * without sending it, so it is never buffered here; one between the two limits still arrives and
   * is refused as `too-large`, with an error reply.
   */
  readonly maxPacketBytes?: number | undefined
  /** Deepest nesting of arrays and objects accepted in a received payload (default 64). */
  readonly maxNestingDepth?: number | undefined
  /** A QoS 1 publish without PUBACK after this long fails with `timeout` (default 10 s). */
  readonly publishTimeoutMs?: number | undefined
  /**
   * How many unacknowledged QoS 1 messages the broker may have in flight to us (MQTT 5 Receive
   * Maximum, 1 to 65535; default 64). Messages waiting for `ack` count. With `maxPacketBytes` it
   * bounds what received messages can hold in memory; QoS 0 messages are held to the same count.
   */
  readonly receiveMaximum?: number | undefined
  /**
   * A topic only this connection uses (e.g. under its own reply topic): with it, the connection
   * watches its intake. After `intakeProbeMs` without a QoS 1 message it publishes a probe there;
   * one the broker took that does not come back within `intakeProbeMs`, while fewer than
   * `receiveMaximum` messages are held here unacknowledged, means the broker stopped delivering
   * (mosquitto does after dropping `receiveMaximum` messages over our Maximum Packet Size): the
   * connection reports its intake stalled and reconnects, which ends it. Off when unset.
   */
  readonly intakeProbeTopic?: string | undefined
  /** The probe's period, above (default 10 s). */
  readonly intakeProbeMs?: number | undefined
}

export const mqttDefaults = {
  clientIdBase: "microdcs",
  clean: true,
  sessionExpirySeconds: 0,
  keepaliveSeconds: 30,
  connectTimeoutMs: 10_000,
  reconnectMinMs: 500,
  reconnectMaxMs: 15_000,
  publishTimeoutMs: 10_000,
  receiveMaximum: 64,
  intakeProbeMs: 10_000
} as const

/** Room for the topic and the properties next to the payload in a packet the broker may send. */
const PACKET_OVERHEAD_BYTES = 64 * 1024

/** The Maximum Packet Size we announce: twice the payload limit plus room for the properties, or as configured. */
export const maxPacketBytesOf = (options: Pick<MqttOptions, "maxPayloadBytes" | "maxPacketBytes">, defaultMaxPayloadBytes: number): number =>
  options.maxPacketBytes ?? 2 * (options.maxPayloadBytes ?? defaultMaxPayloadBytes) + PACKET_OVERHEAD_BYTES

/** Room for what a broker adds to a message it passes on (subscription identifiers, a longer length field). */
const BROKER_ADDS_BYTES = 64

/**
 * The packet limit for a broker that serves this connection (mosquitto's `max_packet_size`): a
 * message it takes then always fits the Maximum Packet Size we announce, so it never has to
 * drop one on its way here (mosquitto 2.0 keeps an in-flight slot for each it drops).
 */
export const brokerPacketLimitOf = (options: Pick<MqttOptions, "maxPayloadBytes" | "maxPacketBytes">): number =>
  Math.max(20, maxPacketBytesOf(options, DEFAULT_MAX_PAYLOAD_BYTES) - BROKER_ADDS_BYTES)

const MAX_UINT32 = 0xffffffff

/** Why the limits cannot be announced to the broker, if they cannot (mqtt.js would silently replace them). */
export const limitsProblem = (options: Pick<MqttOptions, "receiveMaximum" | "maxPacketBytes" | "maxNestingDepth" | "intakeProbeMs">): string | undefined => {
  const { receiveMaximum, maxPacketBytes, maxNestingDepth, intakeProbeMs } = options
  if (receiveMaximum !== undefined && !(Number.isInteger(receiveMaximum) && receiveMaximum >= 1 && receiveMaximum <= 65535)) {
    return `receiveMaximum must be an integer from 1 to 65535, not ${receiveMaximum}`
  }
  if (maxPacketBytes !== undefined && !(Number.isInteger(maxPacketBytes) && maxPacketBytes >= 1 && maxPacketBytes <= MAX_UINT32)) {
    return `maxPacketBytes must be an integer from 1 to ${MAX_UINT32}, not ${maxPacketBytes}`
  }
  if (maxNestingDepth !== undefined && !(Number.isInteger(maxNestingDepth) && maxNestingDepth >= 1)) {
    return `maxNestingDepth must be a positive integer, not ${maxNestingDepth}`
  }
  if (intakeProbeMs !== undefined && !(Number.isInteger(intakeProbeMs) && intakeProbeMs >= 1)) {
    return `intakeProbeMs must be a positive integer, not ${intakeProbeMs}`
  }
  return undefined
}

const invalidConfig = (message: string) => new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message })))

/**
 * Reads {@link MqttOptions} from the environment: `MQTT_URL` (required), `MQTT_CLIENT_ID_BASE`,
 * `MQTT_USERNAME`, `MQTT_PASSWORD`, `MQTT_CLEAN`, `MQTT_SESSION_EXPIRY_SECONDS`,
 * `MQTT_KEEPALIVE_SECONDS`, `MQTT_CONNECT_TIMEOUT_MS`, `MQTT_MAX_PAYLOAD_BYTES`, `MQTT_MAX_PACKET_BYTES`,
 * `MQTT_MAX_NESTING_DEPTH`, `MQTT_RECEIVE_MAXIMUM`.
 */
export const mqttOptionsConfig: Config.Config<MqttOptions> = Config.all({
  url: Config.schema(
    Schema.String.check(Schema.makeFilter((s) => /^(mqtts?|tcp|ssl|wss?):\/\/./.test(s) || "expected mqtt://host:port or mqtts://host:port")),
    "MQTT_URL"
  ),
  clientIdBase: Config.String("MQTT_CLIENT_ID_BASE").pipe(Config.withDefault(mqttDefaults.clientIdBase)),
  username: Config.option(Config.String("MQTT_USERNAME")),
  password: Config.option(Config.Redacted("MQTT_PASSWORD")),
  clean: Config.Boolean("MQTT_CLEAN").pipe(Config.withDefault(mqttDefaults.clean)),
  sessionExpirySeconds: Config.Int("MQTT_SESSION_EXPIRY_SECONDS").pipe(Config.withDefault(mqttDefaults.sessionExpirySeconds)),
  keepaliveSeconds: Config.Int("MQTT_KEEPALIVE_SECONDS").pipe(Config.withDefault(mqttDefaults.keepaliveSeconds)),
  connectTimeoutMs: Config.Int("MQTT_CONNECT_TIMEOUT_MS").pipe(Config.withDefault(mqttDefaults.connectTimeoutMs)),
  maxPayloadBytes: Config.Int("MQTT_MAX_PAYLOAD_BYTES").pipe(Config.withDefault(256 * 1024)),
  maxPacketBytes: Config.option(Config.Int("MQTT_MAX_PACKET_BYTES")),
  maxNestingDepth: Config.option(Config.Int("MQTT_MAX_NESTING_DEPTH")),
  receiveMaximum: Config.Int("MQTT_RECEIVE_MAXIMUM").pipe(Config.withDefault(mqttDefaults.receiveMaximum))
}).pipe(
  Config.map((c) => ({
    ...c,
    username: c.username._tag === "Some" ? c.username.value : undefined,
    password: c.password._tag === "Some" ? c.password.value : undefined,
    maxPacketBytes: c.maxPacketBytes._tag === "Some" ? c.maxPacketBytes.value : undefined,
    maxNestingDepth: c.maxNestingDepth._tag === "Some" ? c.maxNestingDepth.value : undefined
  })),
  Config.mapEffect((c) => {
    const problem = limitsProblem(c)
    return problem === undefined ? Effect.succeed(c) : Effect.fail(invalidConfig(`MQTT limits: ${problem}`))
  })
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
