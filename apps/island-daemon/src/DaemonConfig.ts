import { hostname } from "node:os"
import { Config, ConfigProvider, Effect, Option, type Redacted, Result } from "effect"
import { type ValkeyOptions, valkeyOptionsConfig } from "@microdcs/store"
import { type EngineOptions, engineOptionsConfig } from "@microdcs/sfc-runtime"
import type { RecipePins } from "@microdcs/job-control"
import { allProblems, checkedInt, checkedString, configFailures, everyProblem, invalidSetting, prefixProblem, reported, tlsFiles, tlsProblems } from "./ConfigChecks.js"
import { type HttpUser, httpUsersSetting } from "./HttpUsers.js"
import { type MqttSettings, mqttSettings } from "./MqttSettings.js"
import { type HistorySettings, prometheusMatchersSetting, prometheusUrlSetting } from "./HistoryConfig.js"
import { nonNegative, positive } from "./NumberSettings.js"
import { pgDataDirSetting, pgUrlSetting, recipeDigestsSetting, resolvePgDataDir } from "./ExecutionLogConfig.js"

/** The roles one process can run; several daemons share an island through consumer groups and leases. */
export const allRoles = ["job-control", "engine", "sweep", "publisher", "storage"] as const
export type Role = (typeof allRoles)[number]

export type { MqttSettings, TlsFiles } from "./MqttSettings.js"

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
  /**
   * Whose tokens `/api/*` and `/metrics` take as `Authorization: Bearer {token}`, each a viewer or
   * an operator (HTTP_TOKEN, HTTP_OPERATOR_TOKEN, HTTP_TOKEN_FILE). None: open to read, no actions.
   */
  readonly httpUsers: ReadonlyArray<HttpUser>
  readonly shutdownGraceMs: number
  readonly engine: EngineOptions
  readonly retentionMs: number
  readonly defaultAcceptanceLimit: number
  readonly messageExpirySeconds: number
  /** The publisher's state index of a scope at most this often (0: after every batch). */
  readonly stateIndexIntervalMs: number
  /** Job control dedupe: the claim's lease while a request is processed, and how long it stays done. */
  readonly dedupeLeaseMs: number
  readonly dedupeDoneTtlMs: number
  /** The storage role's PostgreSQL (`PG_URL`); unset: an embedded PGlite on a thread of this process. */
  readonly pgUrl: Redacted.Redacted<string> | undefined
  /** Where the embedded PGlite keeps the archive (`PG_DATA_DIR`, `memory://` for none), resolved. */
  readonly pgDataDir: string
  /** Pinned recipe digests (`RECIPE_DIGESTS`): work master id → SHA-256 its recipe must have. */
  readonly recipeDigests: RecipePins
  /** The journal: how often the expiry sweep runs (sweep role) and the local cache's bound in bytes (0: none). */
  readonly journal: { readonly sweepIntervalMs: number; readonly cacheBytes: number }
  /** Triggers: the fallback reload interval (TRIGGER_REFRESH_INTERVAL_MS) and the events topic depth watched (TRIGGER_EVENT_LEVELS). */
  readonly triggers: { readonly refreshIntervalMs: number; readonly eventLevels: number }
  /** The console's history: the daemon's own 24 hours, or a Prometheus server (HistoryConfig.ts). */
  readonly history: HistorySettings
  /** Whether the daemon brings the island's indexes up to this release at start (INDEX_UPGRADE, `on` by default). */
  readonly indexUpgrade: boolean
}

/**
 * The roles a list names: `a,b` runs those; an entry `-a` leaves `a` out, of the named roles or,
 * when only exclusions are named, of all (`-storage`: every role but storage).
 */
const rolesOf = (text: string): ReadonlySet<Role> => {
  const entries = text.split(",").map((r) => r.trim())
  const named = entries.filter((r) => !r.startsWith("-")) as Array<Role>
  const left = new Set(entries.filter((r) => r.startsWith("-")).map((r) => r.slice(1)))
  return new Set((named.length > 0 ? named : allRoles).filter((r) => !left.has(r)))
}

const roles = checkedString("ISLAND_ROLES", (text) =>
  text.split(",").every((r) => (allRoles as ReadonlyArray<string>).includes(r.trim().replace(/^-/, "")))
    ? undefined
    : `ISLAND_ROLES must be a comma-separated list of ${allRoles.join(", ")} (-role leaves one out)`
).pipe(Config.withDefault(allRoles.join(",")), Config.map(rolesOf))

/** `on` or `off`: a setting an operator switches, not a number or a list. */
const indexUpgrade = checkedString("INDEX_UPGRADE", (text) => (text === "on" || text === "off" ? undefined : "INDEX_UPGRADE must be on or off")).pipe(
  Config.withDefault("on"),
  Config.map((text) => text === "on")
)

/**
 * A check the store's own parser lets through: it takes a Sentinel entry without a port as port
 * 26379, so `VALKEY_SENTINELS=bad` would look for a host named "bad" forever instead of failing
 * at start. Only read to fail early; the store's config reads the value.
 */
const sentinelCheck = Config.option(
  checkedString("VALKEY_SENTINELS", (text) =>
    text.split(",").every((entry) => /^(\[[0-9a-fA-F:.]+\]|[^\s:,[\]]+):\d{1,5}$/.test(entry.trim()))
      ? undefined
      : "VALKEY_SENTINELS must be a comma-separated list of host:port"
  )
)

/** The store takes any prefix and refuses a bad one only when it connects: checked here, by name. */
const prefixCheck = Config.option(
  checkedString("VALKEY_PREFIX", (prefix) => {
    const problem = prefixProblem(prefix)
    return problem === undefined ? undefined : `the key prefix ${problem}`
  })
)

/** The store's settings plus the TLS files, which the store takes as PEM text. */
const valkey: Config.Config<ValkeyOptions> = Config.all({ options: reported(valkeyOptionsConfig), files: reported(tlsFiles("VALKEY")) }).pipe(
  Config.mapEffect((results) => everyProblem(results, Result.all(results))),
  Config.mapEffect(({ options, files }) => {
    const usesTls = options.tls === true || (options.url?.startsWith("rediss:") ?? false)
    const problems = allProblems(tlsProblems("VALKEY", files, usesTls))
    return problems === undefined ? Effect.succeed({ options, files }) : Effect.fail(problems)
  }),
  Config.map(({ options, files }) => ({
    ...options,
    ...(files.ca ? { tlsCa: files.ca.pem } : {}),
    ...(files.cert ? { tlsCert: files.cert.pem } : {}),
    ...(files.key ? { tlsKey: files.key.pem } : {})
  }))
)

const positiveEngineSettings = [
  ["maxAttempts", "SFC_MAX_ATTEMPTS"],
  ["counterRecheckMs", "SFC_COUNTER_RECHECK_MS"],
  ["sweepIntervalMs", "SFC_SWEEP_INTERVAL_MS"],
  ["outageThresholdMs", "SFC_OUTAGE_THRESHOLD_MS"],
  ["reconcileIntervalMs", "SFC_RECONCILE_INTERVAL_MS"],
  ["concurrency", "SFC_CONCURRENCY"],
  ["fallbackIntervalMs", "SFC_FALLBACK_INTERVAL_MS"],
  ["claimIdleMs", "SFC_CLAIM_IDLE_MS"],
  ["claimIntervalMs", "SFC_CLAIM_INTERVAL_MS"],
  ["shutdownGraceMs", "SFC_SHUTDOWN_GRACE_MS"],
  ["correlationTtlMs", "SFC_CORRELATION_TTL_MS"]
] as const

/** The engine reads its `SFC_*` integers unchecked; a zero or negative one would fail only inside the engine. */
const engine = engineOptionsConfig.pipe(
  Config.mapEffect((options) => {
    const problems = allProblems(
      positiveEngineSettings.filter(([field]) => !(options[field] > 0)).map(([, variable]) => invalidSetting(variable, `${variable} must be a positive integer`))
    )
    return problems === undefined ? Effect.succeed(options) : Effect.fail(problems)
  })
)

/**
 * Every setting of the daemon, from environment variables, validated once at start. A bad value
 * fails with a `ConfigError` that names the variable.
 */
export const daemonConfig: Config.Config<DaemonConfig> = Config.all({
  sentinelCheck: reported(sentinelCheck),
  prefixCheck: reported(prefixCheck),
  valkey: reported(valkey),
  mqtt: reported(mqttSettings),
  instanceId: reported(Config.String("ISLAND_INSTANCE_ID").pipe(Config.withDefault(`${hostname()}-${process.pid}`))),
  source: reported(Config.option(Config.String("ISLAND_SOURCE"))),
  roles: reported(roles),
  // Loopback unless asked: the API serves job documents, which are not for the whole network.
  httpHost: reported(Config.String("HTTP_HOST").pipe(Config.withDefault("127.0.0.1"))),
  httpPort: reported(nonNegative("HTTP_PORT", 65535).pipe(Config.withDefault(8080))),
  // Tokens are checked as text (so the message is the daemon's, naming the variable), kept as digests.
  httpUsers: reported(httpUsersSetting),
  shutdownGraceMs: reported(positive("SHUTDOWN_GRACE_MS").pipe(Config.withDefault(15_000))),
  engine: reported(engine),
  retentionMs: reported(positive("JOB_RETENTION_MS").pipe(Config.withDefault(7 * 24 * 60 * 60 * 1000))),
  defaultAcceptanceLimit: reported(nonNegative("JOB_ACCEPTANCE_DEFAULT_LIMIT").pipe(Config.withDefault(0))),
  messageExpirySeconds: reported(positive("PUBLISH_MESSAGE_EXPIRY_SECONDS").pipe(Config.withDefault(48 * 60 * 60))),
  stateIndexIntervalMs: reported(nonNegative("PUBLISH_STATE_INDEX_INTERVAL_MS", 3_600_000).pipe(Config.withDefault(1000))),
  dedupeLeaseMs: reported(positive("DEDUPE_LEASE_MS").pipe(Config.withDefault(60_000))),
  dedupeDoneTtlMs: reported(positive("DEDUPE_DONE_TTL_MS").pipe(Config.withDefault(10 * 60_000))),
  pgUrl: reported(pgUrlSetting),
  pgDataDir: reported(pgDataDirSetting),
  recipeDigests: reported(recipeDigestsSetting),
  journal: reported(
    Config.all({
      sweepIntervalMs: positive("JOURNAL_SWEEP_INTERVAL_MS").pipe(Config.withDefault(60_000)),
      cacheBytes: nonNegative("JOURNAL_CACHE_BYTES").pipe(Config.withDefault(32 * 1024 * 1024))
    })
  ),
  triggers: reported(
    Config.all({
      refreshIntervalMs: positive("TRIGGER_REFRESH_INTERVAL_MS").pipe(Config.withDefault(30_000)),
      eventLevels: checkedInt("TRIGGER_EVENT_LEVELS", (n) => (n >= 1 && n <= 8 ? undefined : "TRIGGER_EVENT_LEVELS must be an integer from 1 to 8")).pipe(
        Config.withDefault(3)
      )
    })
  ),
  indexUpgrade: reported(indexUpgrade),
  prometheusUrl: reported(prometheusUrlSetting),
  prometheusMatchers: reported(prometheusMatchersSetting)
}).pipe(
  Config.mapEffect((results) => everyProblem(results, Result.all(results))),
  Config.map(({ sentinelCheck: _sentinels, prefixCheck: _prefix, prometheusUrl, prometheusMatchers, ...c }) => ({
    ...c,
    history: { prometheusUrl, prometheusMatchers },
    embeddedValkey: c.valkey.url === undefined && (c.valkey.sentinels === undefined || c.valkey.sentinels.length === 0),
    source: Option.getOrElse(c.source, () => `urn:microdcs:island:${c.instanceId}`),
    pgDataDir: resolvePgDataDir(c.pgDataDir, c.valkey.prefix ?? "microdcs"),
    engine: { ...c.engine, consumer: c.engine.consumer ?? c.instanceId }
  }))
)

/**
 * How long a shutdown may take before the daemon ends itself (exit 1): the engine's pollers and
 * then its station ingress drain one after the other, each within the grace, and closing the
 * connections takes a little more. A supervisor's stop timeout (systemd's TimeoutStopSec, a
 * container's stop timeout) belongs above it.
 */
export const shutdownDeadlineMs = (shutdownGraceMs: number): number => 2 * shutdownGraceMs + 5_000

/** A one-line explanation of a configuration failure, naming the variables involved (each failure once). */
export const describeConfigError = (error: Config.ConfigError): string => `invalid configuration: ${[...new Set(configFailures(error))].join("; ")}`

/**
 * The environment the daemon reads its settings from, as it always has: a variable set to ""
 * has that value (and is refused where a value must not be empty), it is not taken as unset.
 * Read at the first lookup.
 */
export const daemonEnvironment = (): ConfigProvider.ConfigProvider => ConfigProvider.fromEnv({ preserveEmptyStrings: true })

