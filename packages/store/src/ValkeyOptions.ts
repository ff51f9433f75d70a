import { Config, Redacted, Schema } from "effect"
import { valkeyUrlProblem } from "./ValkeyUrl.js"

/** A Sentinel node; with `sentinels` set, the client asks them for the primary of `sentinelName`. */
export interface SentinelNode {
  readonly host: string
  readonly port: number
}

/** How to reach one island's Valkey. Every field has a production default. */
export interface ValkeyOptions {
  /** `redis://[user:password@]host:port[/db]`, `rediss://` for TLS. Ignored when `sentinels` is set. */
  readonly url?: string | undefined
  readonly sentinels?: ReadonlyArray<SentinelNode> | undefined
  /** The Sentinel master name (default `mymaster`). */
  readonly sentinelName?: string | undefined
  readonly username?: string | undefined
  readonly password?: Redacted.Redacted<string> | undefined
  readonly tls?: boolean | undefined
  /** PEM of the CA that signed the server certificate (default: the system CAs). Used with TLS only. */
  readonly tlsCa?: string | Buffer | undefined
  /** PEM of a client certificate and its key, for servers that ask for one (`tls-auth-clients`). */
  readonly tlsCert?: string | Buffer | undefined
  readonly tlsKey?: string | Buffer | undefined
  /** Key prefix of the island (default `microdcs`). */
  readonly prefix?: string | undefined
  /** Client name shown in `CLIENT LIST`. */
  readonly connectionName?: string | undefined
  readonly connectTimeoutMs?: number | undefined
  /** A sent command without a reply after this long is an `UnknownOutcome` (default 5000). */
  readonly commandTimeoutMs?: number | undefined
  /** How often a command that could not be sent is tried again, with backoff (default 6, about 1.5 s). */
  readonly unavailableRetries?: number | undefined
  /** Largest accepted document text in bytes (default 1 MiB). */
  readonly maxDocumentBytes?: number | undefined
  /**
   * Replicas that must confirm a write (`WAIT`) before it is acknowledged; 0 = off. An
   * unconfirmed write fails as `UnknownOutcome`: it may be on the primary only, and a failover
   * would lose it. Unset: through `sentinels` 1 (0 when Sentinel knows no replica of the
   * primary), else 0. Set it to the number of replicas Sentinel may promote.
   */
  readonly minReplicasAck?: number | undefined
  /** How long a write waits for the replicas' confirmation (default 1000; below `commandTimeoutMs`). */
  readonly replicaAckTimeoutMs?: number | undefined
}

export const defaults = {
  prefix: "microdcs",
  sentinelName: "mymaster",
  connectTimeoutMs: 5000,
  commandTimeoutMs: 5000,
  unavailableRetries: 6,
  maxDocumentBytes: 1024 * 1024,
  minReplicasAck: 0,
  replicaAckTimeoutMs: 1000
} as const

const parseSentinels = (text: string): ReadonlyArray<SentinelNode> =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s) => {
      const at = s.lastIndexOf(":")
      return { host: at > 0 ? s.slice(0, at) : s, port: at > 0 ? Number(s.slice(at + 1)) : 26379 }
    })

/**
 * Reads {@link ValkeyOptions} from the environment: `VALKEY_URL`, `VALKEY_SENTINELS`
 * (`host:port,host:port`), `VALKEY_SENTINEL_NAME`, `VALKEY_USERNAME`, `VALKEY_PASSWORD`,
 * `VALKEY_TLS`, `VALKEY_PREFIX`, `VALKEY_COMMAND_TIMEOUT_MS`, `VALKEY_MAX_DOCUMENT_BYTES`,
 * `VALKEY_MIN_REPLICAS_ACK`, `VALKEY_REPLICA_ACK_TIMEOUT_MS`.
 */
export const valkeyOptionsConfig: Config.Config<ValkeyOptions> = Config.all({
  url: Config.option(
    Config.schema(
      Schema.String.check(Schema.makeFilter((u) => valkeyUrlProblem(u) === undefined || "VALKEY_URL must look like redis://host:port or rediss://host:port")),
      "VALKEY_URL"
    )
  ),
  sentinels: Config.option(
    Config.schema(
      Schema.String.check(
        Schema.makeFilter((s) => parseSentinels(s).every((n) => n.host.length > 0 && Number.isInteger(n.port) && n.port > 0) || "expected host:port[,host:port...]")
      ),
      "VALKEY_SENTINELS"
    )
  ),
  sentinelName: Config.String("VALKEY_SENTINEL_NAME").pipe(Config.withDefault(defaults.sentinelName)),
  username: Config.option(Config.String("VALKEY_USERNAME")),
  password: Config.option(Config.Redacted("VALKEY_PASSWORD")),
  tls: Config.Boolean("VALKEY_TLS").pipe(Config.withDefault(false)),
  prefix: Config.String("VALKEY_PREFIX").pipe(Config.withDefault(defaults.prefix)),
  commandTimeoutMs: Config.Int("VALKEY_COMMAND_TIMEOUT_MS").pipe(Config.withDefault(defaults.commandTimeoutMs)),
  maxDocumentBytes: Config.Int("VALKEY_MAX_DOCUMENT_BYTES").pipe(Config.withDefault(defaults.maxDocumentBytes)),
  // Unset stays unset: the store decides when it connects (through Sentinel, replica acknowledgement is on).
  minReplicasAck: Config.option(
    Config.schema(Schema.Int.check(Schema.makeFilter((n) => n >= 0 || "VALKEY_MIN_REPLICAS_ACK must be 0 (off) or a positive integer")), "VALKEY_MIN_REPLICAS_ACK")
  ),
  replicaAckTimeoutMs: Config.schema(
    Schema.Int.check(Schema.makeFilter((n) => n > 0 || "VALKEY_REPLICA_ACK_TIMEOUT_MS must be a positive integer")),
    "VALKEY_REPLICA_ACK_TIMEOUT_MS"
  ).pipe(Config.withDefault(defaults.replicaAckTimeoutMs))
}).pipe(
  Config.map((c) => ({
    url: c.url._tag === "Some" ? c.url.value : undefined,
    sentinels: c.sentinels._tag === "Some" ? parseSentinels(c.sentinels.value) : undefined,
    sentinelName: c.sentinelName,
    username: c.username._tag === "Some" ? c.username.value : undefined,
    password: c.password._tag === "Some" ? c.password.value : undefined,
    tls: c.tls,
    prefix: c.prefix,
    commandTimeoutMs: c.commandTimeoutMs,
    maxDocumentBytes: c.maxDocumentBytes,
    minReplicasAck: c.minReplicasAck._tag === "Some" ? c.minReplicasAck.value : undefined,
    replicaAckTimeoutMs: c.replicaAckTimeoutMs
  }))
)
