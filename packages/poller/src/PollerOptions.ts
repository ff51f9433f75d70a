import { hostname } from "node:os"
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import { InvalidInput, type ScopedFamily } from "@microdcs/store"
import type { BatchOutcome } from "./BatchOutcome.js"

/** Key families whose only part is the scope (`changes:{scope}`, `sfc:work:{scope}`): the streams a poller can read. */
export type { ScopedFamily }

/** How often a stream read by consumer groups alone is trimmed when the caller does not say. */
export const DEFAULT_TRIM_INTERVAL_MS = 10_000

/**
 * `changes:{scope}` is also read by the change publisher with a cursor of its own: trimming it to
 * what the groups acknowledged would drop changes not yet published (it is capped by MAXLEN instead).
 */
const trimmable = (stream: ScopedFamily) => stream !== "changes"

/** What the handler gets: one entry of one scope's stream. */
export interface PollerEntry {
  readonly kind: string
  readonly scope: string
  readonly stream: string
  readonly id: string
  readonly fields: Readonly<Record<string, string>>
  /** 1 on the first delivery; counts every redelivery and takeover. */
  readonly deliveries: number
}

/** Everything but the handler: the same for the per-entry and the batch handler. */
export interface PollerSettings {
  /** Names the nudge channel `nudge:{kind}` and the dead letters `dlq:{kind}:{scope}` ("changes", "sfc"). */
  readonly kind: string
  /** The stream family read per scope, e.g. "changes" or "sfcWork". */
  readonly stream: ScopedFamily
  /** Consumer group; one group sees every entry once across its consumers. */
  readonly group: string
  /** Consumer name inside the group; default `{hostname}-{pid}-{random}`. */
  readonly consumer?: string | undefined
  /** Handlers running at once over all scopes (default 16); with `handleBatch`, batches running at once. */
  readonly concurrency?: number | undefined
  /** Entries per read (default 2 × concurrency, at most 1000). */
  readonly batchSize?: number | undefined
  /** Every known scope is read this often even without a nudge; the registry is re-read too (default 1000). */
  readonly fallbackIntervalMs?: number | undefined
  /** An entry pending this long on any consumer is an orphan and may be taken over (default 30000). Longer than any handler runs. */
  readonly claimIdleMs?: number | undefined
  /** How often each scope looks for orphans (default 5000). */
  readonly claimIntervalMs?: number | undefined
  /** After this many failed deliveries an entry moves to the dead-letter stream (default 5). */
  readonly maxDeliveries?: number | undefined
  /** Delay before delivery n+1 after a failure: initialMs × 2^(n-1), capped at maxMs (default 500 ms, 30 s). */
  readonly backoff?: { readonly initialMs?: number | undefined; readonly maxMs?: number | undefined } | undefined
  /** Where a new group starts: "0" (default) reads what was written before the group existed; "$" skips it. */
  readonly groupStartId?: string | undefined
  /**
   * Trim each stream this often to what every group has acknowledged; 0 = never.
   * Default 10000, except for `changes`, which is never trimmed here: the change publisher reads it
   * with a cursor of its own and would lose entries (a positive value for it is refused).
   */
  readonly trimIntervalMs?: number | undefined
  /**
   * How often this consumer renews its heartbeat, and how often each scope looks for consumers of
   * its group whose heartbeat is gone, to take over their pending entries (default 1000).
   */
  readonly heartbeatIntervalMs?: number | undefined
  /**
   * How long a heartbeat lives: a consumer that renewed none for this long counts as dead
   * (default 3000; at least 2 × heartbeatIntervalMs, so one late renewal is not a death).
   */
  readonly heartbeatTtlMs?: number | undefined
  /** On shutdown, how long in-flight handlers may take to finish and acknowledge (default 10000). */
  readonly shutdownGraceMs?: number | undefined
}

/** The per-entry handler: runs once per delivery, up to `concurrency` at once. */
export interface EntryHandlerOptions<E, R> extends PollerSettings {
  /** Runs once per delivery. Succeeding acknowledges the entry; failing (or dying) leaves it for a retry. */
  readonly handler: (entry: PollerEntry) => Effect.Effect<void, E, R>
  readonly handleBatch?: undefined
}

/**
 * The batch handler: one call per read (new entries, own retries or taken-over entries of one
 * scope), in stream order; a scope's batches never overlap. See {@link BatchOutcome}. Failing (or
 * dying) fails every entry of the batch; interrupted, it settles none (they stay pending).
 */
export interface BatchHandlerOptions<E, R> extends PollerSettings {
  readonly handleBatch: (entries: ReadonlyArray<PollerEntry>) => Effect.Effect<BatchOutcome | void, E, R>
  readonly handler?: undefined
}

/** A poller's options: the settings and exactly one of `handler` (per entry) or `handleBatch`. */
export type PollerOptions<E, R> = EntryHandlerOptions<E, R> | BatchHandlerOptions<E, R>

/** Options with every default applied and checked. */
export interface ResolvedOptions {
  readonly kind: string
  readonly stream: ScopedFamily
  readonly group: string
  readonly consumer: string
  readonly concurrency: number
  readonly batchSize: number
  readonly fallbackIntervalMs: number
  readonly claimIdleMs: number
  readonly claimIntervalMs: number
  readonly maxDeliveries: number
  readonly backoffInitialMs: number
  readonly backoffMaxMs: number
  readonly groupStartId: string
  readonly trimIntervalMs: number
  readonly heartbeatIntervalMs: number
  readonly heartbeatTtlMs: number
  readonly shutdownGraceMs: number
}

export const defaultConsumerName = (): string => `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`

const integer = (field: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): Effect.Effect<number, InvalidInput> =>
  Number.isInteger(value) && value >= min && value <= max
    ? Effect.succeed(value)
    : Effect.fail(new InvalidInput({ field, message: `${field} must be an integer from ${min} to ${max}, got ${value}` }))

const text = (field: string, value: string): Effect.Effect<string, InvalidInput> =>
  typeof value === "string" && value.length > 0 ? Effect.succeed(value) : Effect.fail(new InvalidInput({ field, message: `${field} must be a non-empty string` }))

/** Applies defaults and checks every option once, at start. */
export const resolveOptions = (options: PollerSettings): Effect.Effect<ResolvedOptions, InvalidInput> =>
  Effect.gen(function* () {
    const concurrency = yield* integer("concurrency", options.concurrency ?? 16, 1, 10_000)
    const backoffInitialMs = yield* integer("backoff.initialMs", options.backoff?.initialMs ?? 500, 1)
    const groupStartId = options.groupStartId ?? "0"
    if (groupStartId !== "$" && !/^\d+(-\d+)?$/.test(groupStartId)) {
      return yield* new InvalidInput({ field: "groupStartId", message: `groupStartId must be "$" or a stream id, got '${groupStartId}'` })
    }
    const trimIntervalMs = yield* integer("trimIntervalMs", options.trimIntervalMs ?? (trimmable(options.stream) ? DEFAULT_TRIM_INTERVAL_MS : 0), 0)
    if (trimIntervalMs > 0 && !trimmable(options.stream)) {
      return yield* new InvalidInput({
        field: "trimIntervalMs",
        message: `the ${options.stream} stream is also read by the change publisher's own cursor; trimming it by group state would lose entries (use 0)`
      })
    }
    const heartbeatIntervalMs = yield* integer("heartbeatIntervalMs", options.heartbeatIntervalMs ?? 1000, 1)
    const heartbeatTtlMs = yield* integer("heartbeatTtlMs", options.heartbeatTtlMs ?? Math.max(3000, 2 * heartbeatIntervalMs), 2 * heartbeatIntervalMs)
    return {
      kind: yield* text("kind", options.kind),
      stream: options.stream,
      group: yield* text("group", options.group),
      consumer: yield* text("consumer", options.consumer ?? defaultConsumerName()),
      concurrency,
      batchSize: yield* integer("batchSize", options.batchSize ?? Math.min(1000, 2 * concurrency), 1, 1000),
      fallbackIntervalMs: yield* integer("fallbackIntervalMs", options.fallbackIntervalMs ?? 1000, 1),
      claimIdleMs: yield* integer("claimIdleMs", options.claimIdleMs ?? 30_000, 1),
      claimIntervalMs: yield* integer("claimIntervalMs", options.claimIntervalMs ?? 5_000, 1),
      maxDeliveries: yield* integer("maxDeliveries", options.maxDeliveries ?? 5, 1),
      backoffInitialMs,
      backoffMaxMs: yield* integer("backoff.maxMs", options.backoff?.maxMs ?? Math.max(30_000, backoffInitialMs), backoffInitialMs),
      groupStartId,
      trimIntervalMs,
      heartbeatIntervalMs,
      heartbeatTtlMs,
      shutdownGraceMs: yield* integer("shutdownGraceMs", options.shutdownGraceMs ?? 10_000, 0)
    }
  })

/** The wait before the delivery that follows failed delivery `deliveries` (1-based). */
export const backoffMs = (options: ResolvedOptions, deliveries: number): number =>
  Math.min(options.backoffMaxMs, options.backoffInitialMs * 2 ** Math.min(Math.max(deliveries - 1, 0), 30))
