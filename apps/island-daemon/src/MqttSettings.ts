import { Config, Effect, Option, type Redacted, Result } from "effect"
import { allProblems, checkedString, everyProblem, reported, tlsFiles, tlsProblems } from "./ConfigChecks.js"
import { nonNegative, positive } from "./NumberSettings.js"

/** PEM files for a TLS connection (read at start). */
export interface TlsFiles {
  readonly ca: Buffer | undefined
  readonly cert: Buffer | undefined
  readonly key: Buffer | undefined
}

export interface MqttSettings {
  /** Unset: the daemon starts its own mosquitto. */
  readonly url: string | undefined
  readonly username: string | undefined
  readonly password: Redacted.Redacted<string> | undefined
  readonly tls: TlsFiles
  readonly topicPrefix: string
  readonly discriminator: string | undefined
  readonly wildcardLevels: number
  readonly sharedGroup: string | undefined
  /**
   * How long the broker keeps this instance's session after a disconnect: the messages not yet
   * acknowledged at a stop or crash are redelivered when the instance comes back with the same
   * ISLAND_INSTANCE_ID (its client id) within that time; with 0 they are lost.
   *
   * Default 600 s for a lone instance, 0 with a shared group: the broker (mosquitto) keeps
   * handing a share of the commands to a crashed member's session while it lasts, where nobody
   * answers them, whereas with 0 the live members get all of them at once.
   */
  readonly sessionExpirySeconds: number
  /**
   * Message limits: the largest payload taken or published (MQTT_MAX_PAYLOAD_BYTES, also the
   * publisher's page size), the Maximum Packet Size and Receive Maximum announced to the broker,
   * the deepest JSON or MessagePack nesting decoded. Unset: the MQTT package's defaults.
   */
  readonly limits: {
    readonly maxPayloadBytes: number | undefined
    readonly maxPacketBytes: number | undefined
    readonly receiveMaximum: number | undefined
    readonly maxNestingDepth: number | undefined
  }
  /**
   * The intake watch's period (MQTT_INTAKE_PROBE_MS, default 10 s): after this long without a
   * message a probe goes out, and one that does not come back within as long again, though this
   * instance holds free in-flight slots, marks the intake stalled (`/readyz`) and reconnects.
   */
  readonly intakeProbeMs: number | undefined
}

const isTlsMqttUrl = (url: string | undefined) => url !== undefined && /^(mqtts|ssl|wss):/.test(url)

/** An optional positive integer: unset is `undefined`. */
const optionalPositive = (name: string) => Config.option(positive(name)).pipe(Config.map(Option.getOrUndefined))

/** The MQTT settings (`MQTT_*`), the TLS files read and checked against the URL; every problem reported. */
export const mqttSettings: Config.Config<MqttSettings> = Config.all({
  url: reported(
    Config.option(checkedString("MQTT_URL", (s) => (/^(mqtts?|tcp|ssl|wss?):\/\/./.test(s) ? undefined : "MQTT_URL must look like mqtt://host:port")))
  ),
  username: reported(Config.option(Config.String("MQTT_USERNAME"))),
  password: reported(Config.option(Config.Redacted("MQTT_PASSWORD"))),
  tls: reported(tlsFiles("MQTT")),
  topicPrefix: reported(
    checkedString("MQTT_TOPIC_PREFIX", (s) => (s.length > 0 && !/[+#\0]/.test(s) ? undefined : "MQTT_TOPIC_PREFIX must not contain + # or a NUL")).pipe(
      Config.withDefault("microdcs")
    )
  ),
  discriminator: reported(Config.option(Config.String("MQTT_DISCRIMINATOR"))),
  wildcardLevels: reported(nonNegative("MQTT_WILDCARD_LEVELS").pipe(Config.withDefault(1))),
  sharedGroup: reported(Config.option(Config.String("MQTT_SHARED_GROUP"))),
  sessionExpirySeconds: reported(Config.option(nonNegative("MQTT_SESSION_EXPIRY_SECONDS"))),
  limits: reported(
    Config.all({
      maxPayloadBytes: optionalPositive("MQTT_MAX_PAYLOAD_BYTES"),
      maxPacketBytes: optionalPositive("MQTT_MAX_PACKET_BYTES"),
      receiveMaximum: optionalPositive("MQTT_RECEIVE_MAXIMUM"),
      maxNestingDepth: optionalPositive("MQTT_MAX_NESTING_DEPTH")
    })
  ),
  intakeProbeMs: reported(optionalPositive("MQTT_INTAKE_PROBE_MS"))
}).pipe(
  Config.mapEffect((results) => everyProblem(results, Result.all(results))),
  Config.mapEffect((m) => {
    const problems = allProblems(tlsProblems("MQTT", m.tls, isTlsMqttUrl(Option.getOrUndefined(m.url))))
    return problems === undefined ? Effect.succeed(m) : Effect.fail(problems)
  }),
  Config.map((m) => ({
    url: Option.getOrUndefined(m.url),
    username: Option.getOrUndefined(m.username),
    password: Option.getOrUndefined(m.password),
    tls: { ca: m.tls.ca?.pem, cert: m.tls.cert?.pem, key: m.tls.key?.pem },
    topicPrefix: m.topicPrefix,
    discriminator: Option.getOrUndefined(m.discriminator),
    wildcardLevels: m.wildcardLevels,
    sharedGroup: Option.getOrUndefined(m.sharedGroup),
    sessionExpirySeconds: Option.getOrElse(m.sessionExpirySeconds, () => (Option.isSome(m.sharedGroup) ? 0 : 600)),
    limits: m.limits,
    intakeProbeMs: m.intakeProbeMs
  }))
)
