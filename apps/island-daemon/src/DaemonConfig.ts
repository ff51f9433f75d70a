import { hostname } from "node:os"
import { Config, ConfigError, Option } from "effect"
import { type ValkeyOptions, valkeyOptionsConfig } from "@microdcs/store"
import { type EngineOptions, engineOptionsConfig } from "@microdcs/sfc"

/** The roles one process can run; several daemons share an island through consumer groups and leases. */
export const allRoles = ["job-control", "engine", "sweep", "publisher"] as const
export type Role = (typeof allRoles)[number]

export interface MqttSettings {
  /** Unset: the daemon starts its own mosquitto. */
  readonly url: string | undefined
  readonly topicPrefix: string
  readonly discriminator: string | undefined
  readonly wildcardLevels: number
  readonly sharedGroup: string | undefined
}

export interface DaemonConfig {
  readonly valkey: ValkeyOptions
  /** True when neither VALKEY_URL nor VALKEY_SENTINELS is set: the daemon starts its own server. */
  readonly embeddedValkey: boolean
  readonly mqtt: MqttSettings
  readonly instanceId: string
  readonly source: string
  readonly roles: ReadonlySet<Role>
  readonly httpHost: string
  readonly httpPort: number
  readonly shutdownGraceMs: number
  readonly engine: EngineOptions
  readonly retentionMs: number
  readonly defaultAcceptanceLimit: number
  readonly messageExpirySeconds: number
}

const positive = (name: string) =>
  Config.integer(name).pipe(Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }))

const nonNegative = (name: string) =>
  Config.integer(name).pipe(Config.validate({ message: `${name} must be 0 or a positive integer`, validation: (n) => n >= 0 }))

const roles = Config.string("ISLAND_ROLES").pipe(
  Config.withDefault(allRoles.join(",")),
  Config.validate({
    message: `ISLAND_ROLES must be a comma-separated list of ${allRoles.join(", ")}`,
    validation: (text) => text.split(",").every((r) => (allRoles as ReadonlyArray<string>).includes(r.trim()))
  }),
  Config.map((text) => new Set(text.split(",").map((r) => r.trim() as Role)))
)

const mqtt: Config.Config<MqttSettings> = Config.all({
  url: Config.option(
    Config.string("MQTT_URL").pipe(
      Config.validate({ message: "MQTT_URL must look like mqtt://host:port", validation: (s) => /^(mqtts?|tcp|ssl|wss?):\/\/./.test(s) })
    )
  ),
  topicPrefix: Config.string("MQTT_TOPIC_PREFIX").pipe(
    Config.withDefault("microdcs"),
    Config.validate({ message: "MQTT_TOPIC_PREFIX must not contain + # or a NUL", validation: (s) => s.length > 0 && !/[+#\0]/.test(s) })
  ),
  discriminator: Config.option(Config.string("MQTT_DISCRIMINATOR")),
  wildcardLevels: nonNegative("MQTT_WILDCARD_LEVELS").pipe(Config.withDefault(1)),
  sharedGroup: Config.option(Config.string("MQTT_SHARED_GROUP"))
}).pipe(
  Config.map((m) => ({
    url: Option.getOrUndefined(m.url),
    topicPrefix: m.topicPrefix,
    discriminator: Option.getOrUndefined(m.discriminator),
    wildcardLevels: m.wildcardLevels,
    sharedGroup: Option.getOrUndefined(m.sharedGroup)
  }))
)

/**
 * Every setting of the daemon, from environment variables, validated once at start. A bad value
 * fails with a `ConfigError` that names the variable.
 */
export const daemonConfig: Config.Config<DaemonConfig> = Config.all({
  valkey: valkeyOptionsConfig,
  mqtt,
  instanceId: Config.string("ISLAND_INSTANCE_ID").pipe(Config.withDefault(`${hostname()}-${process.pid}`)),
  source: Config.option(Config.string("ISLAND_SOURCE")),
  roles,
  httpHost: Config.string("HTTP_HOST").pipe(Config.withDefault("0.0.0.0")),
  httpPort: nonNegative("HTTP_PORT").pipe(
    Config.withDefault(8080),
    Config.validate({ message: "HTTP_PORT must be at most 65535", validation: (n) => n <= 65535 })
  ),
  shutdownGraceMs: positive("SHUTDOWN_GRACE_MS").pipe(Config.withDefault(15_000)),
  engine: engineOptionsConfig,
  retentionMs: positive("JOB_RETENTION_MS").pipe(Config.withDefault(7 * 24 * 60 * 60 * 1000)),
  defaultAcceptanceLimit: nonNegative("JOB_ACCEPTANCE_DEFAULT_LIMIT").pipe(Config.withDefault(0)),
  messageExpirySeconds: positive("PUBLISH_MESSAGE_EXPIRY_SECONDS").pipe(Config.withDefault(48 * 60 * 60))
}).pipe(
  Config.map((c) => ({
    ...c,
    embeddedValkey: c.valkey.url === undefined && (c.valkey.sentinels === undefined || c.valkey.sentinels.length === 0),
    source: Option.getOrElse(c.source, () => `urn:microdcs:island:${c.instanceId}`),
    engine: { ...c.engine, consumer: c.engine.consumer ?? c.instanceId }
  }))
)

/** A one-paragraph explanation of a configuration failure, naming the variables involved. */
export const describeConfigError = (error: ConfigError.ConfigError): string =>
  `invalid configuration: ${String(error).replace(/^\(|\)$/g, "")}`

export const isConfigError = (u: unknown): u is ConfigError.ConfigError => ConfigError.isConfigError(u)

