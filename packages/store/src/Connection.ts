import { Redis, type RedisOptions } from "iovalkey"
import { Redacted } from "effect"
import { defaults, type SentinelNode, type ValkeyOptions } from "./ValkeyOptions.js"

/**
 * iovalkey options for one connection. Chosen so that every failure is classifiable:
 * - `enableOfflineQueue: false`: a command is never parked while disconnected; it fails at
 *   once as "not sent" (StoreUnavailable) and our own backoff decides when to try again;
 * - `maxRetriesPerRequest: 0` and `autoResendUnfulfilledCommands: false`: a command that was
 *   sent when the connection dropped is rejected, never silently resent (UnknownOutcome);
 * - `reconnectOnError` for READONLY (and WAIT refused on a replica): after a failover the
 *   demoted primary is left at once;
 * - `failoverDetector` with Sentinel: the client subscribes to the sentinels' `+switch-master`
 *   and leaves the old primary as soon as a replica was promoted, not only once Sentinel has
 *   demoted the old one (seconds later, while it still takes writes that the failover discards).
 */
export const connectionOptions = (
  options: ValkeyOptions,
  overrides: { readonly commandTimeoutMs?: number | undefined; readonly name?: string | undefined } = {}
): RedisOptions => {
  const commandTimeout = "commandTimeoutMs" in overrides ? overrides.commandTimeoutMs : options.commandTimeoutMs ?? defaults.commandTimeoutMs
  const common: RedisOptions = {
    lazyConnect: true,
    // Never iovalkey's auto-pipelining: it keeps one pipeline in flight and holds every later
    // command until that pipeline's last reply, so server and client take turns instead of
    // working at once (with 64 puts in flight, about half the throughput of a plain client).
    // The shared command connection gathers a tick's commands into one write itself (TickWrites).
    enableAutoPipelining: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // The client's own resubscribe after a reconnect sends SUBSCRIBE with no handler on its
    // promise: a connection that closes again at once rejects it unhandled and ends the process.
    // Subscribers resubscribe themselves on "ready" (Nudges, ScopeRegistry), catching the failure.
    autoResubscribe: false,
    connectTimeout: options.connectTimeoutMs ?? defaults.connectTimeoutMs,
    ...(commandTimeout !== undefined ? { commandTimeout } : {}),
    // Exponential backoff with jitter, capped at 2 s: a restarted server is found quickly
    // without a reconnect storm from every island process at once.
    retryStrategy: (times) => Math.min(2000, 25 * 2 ** Math.min(times, 7)) * (0.5 + Math.random() / 2),
    reconnectOnError: (error) => (demotedPrimary.test(error.message) ? 1 : false),
    ...connectionName(overrides.name ?? options.connectionName),
    ...(options.username ? { username: options.username } : {}),
    ...(options.password ? { password: Redacted.value(options.password) } : {})
  }
  if (options.sentinels && options.sentinels.length > 0) {
    return {
      ...common,
      sentinels: options.sentinels.map((s) => ({ host: s.host, port: s.port })),
      name: options.sentinelName ?? defaults.sentinelName,
      failoverDetector: true,
      ...(options.tls ? { tls: tlsOptions(options), enableTLSForSentinelMode: true } : {})
    }
  }
  const url = new URL(options.url ?? "redis://127.0.0.1:6379")
  const tls = options.tls || url.protocol === "rediss:"
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0
  return {
    ...common,
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port ? Number(url.port) : 6379,
    db,
    ...(url.username && !options.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password && !options.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(tls ? { tls: tlsOptions(options) } : {})
  }
}

/** A short connection to one sentinel, to ask it about the primary: it fails at once instead of retrying or reconnecting. */
export const sentinelConnectionOptions = (options: ValkeyOptions, node: SentinelNode): RedisOptions => ({
  host: node.host,
  port: node.port,
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  retryStrategy: () => null,
  connectTimeout: options.connectTimeoutMs ?? defaults.connectTimeoutMs,
  commandTimeout: options.commandTimeoutMs ?? defaults.commandTimeoutMs,
  ...(options.tls ? { tls: tlsOptions(options) } : {})
})

/** Replies that say the node is a replica now: reconnect, and Sentinel names the primary. */
const demotedPrimary = /^(READONLY|ERR WAIT cannot be used with replica instances)/

const connectionName = (name: string | undefined) => (name ? { connectionName: name } : {})

/** The CA and client certificate given in the options, for Node's TLS. */
const tlsOptions = (options: ValkeyOptions) => ({
  ...(options.tlsCa !== undefined ? { ca: options.tlsCa } : {}),
  ...(options.tlsCert !== undefined ? { cert: options.tlsCert } : {}),
  ...(options.tlsKey !== undefined ? { key: options.tlsKey } : {})
})

export const createClient = (options: RedisOptions): Redis => new Redis(options)
