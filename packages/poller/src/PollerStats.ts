import { Context, Effect, Metric, Record as Rec } from "effect"

/** What one poller has done since it started. */
export interface PollerStats {
  /** New entries read from the stream (first deliveries; claims and retries are counted apart). */
  readonly read: number
  /** Entries whose handler succeeded and that were acknowledged. */
  readonly processed: number
  /** Handler failures (each failed delivery counts once). */
  readonly failed: number
  /** Own failed entries delivered again after their backoff. */
  readonly retried: number
  /** Entries moved to the dead-letter stream. */
  readonly deadLettered: number
  /** Orphans taken over from other consumers with XAUTOCLAIM. */
  readonly claimed: number
  /** Pending ids XAUTOCLAIM found deleted (trimmed or XDEL'd before anyone acknowledged them). */
  readonly claimDeleted: number
  /** Entries removed by trimming. */
  readonly trimmed: number
  /** Handlers running now (with `handleBatch`: entries of the batches running now). */
  readonly inFlight: number
  /** Scopes with a consumer group and a worker. */
  readonly scopes: number
}

export type Counter = Exclude<keyof PollerStats, "inFlight" | "scopes">

const zero: PollerStats = {
  read: 0,
  processed: 0,
  failed: 0,
  retried: 0,
  deadLettered: 0,
  claimed: 0,
  claimDeleted: 0,
  trimmed: 0,
  inFlight: 0,
  scopes: 0
}

const metricNames: Record<Counter, string> = {
  read: "microdcs_poller_read_total",
  processed: "microdcs_poller_processed_total",
  failed: "microdcs_poller_failed_total",
  retried: "microdcs_poller_retried_total",
  deadLettered: "microdcs_poller_dead_lettered_total",
  claimed: "microdcs_poller_claimed_total",
  claimDeleted: "microdcs_poller_claim_deleted_total",
  trimmed: "microdcs_poller_trimmed_total"
}

/**
 * The counters of one poller: a plain record for `stats` (per instance, exact) and a process-wide
 * Metric with the attributes kind and group for whatever exports metrics. Every update is
 * synchronous: the poller counts per batch, and an Effect per count, or a `Metric.withAttributes`
 * metric (which merges its attributes into the context on every update), was a visible share of its
 * CPU. So each poller updates counters of its own with one context built here: the context of the
 * fiber that started it (its metric registry and `Metric.CurrentMetricAttributes`, as `Metric.update`
 * would use them) plus kind and group. A counter caches its series key per attribute set, so the key is
 * built once. The series is the one `Metric.withAttributes(counter, { kind, group })` reads.
 */
export const makeStats = (kind: string, group: string) =>
  Effect.gen(function* () {
    const fiberContext = yield* Effect.context<never>()
    const attributes = { ...Context.get(fiberContext, Metric.CurrentMetricAttributes), kind, group }
    const context = Context.add(fiberContext, Metric.CurrentMetricAttributes, attributes)
    const metrics = Rec.map(metricNames, (name) => Metric.counter(name))
    const state: { -readonly [K in keyof PollerStats]: number } = { ...zero }
    /** Counts `n` now, from plain code. */
    const count = (counter: Counter, n = 1): void => {
      if (n === 0) return
      state[counter] += n
      metrics[counter].updateUnsafe(n, context)
    }
    const move = (field: "inFlight" | "scopes", delta: number): void => {
      state[field] += delta
    }
    return {
      get: Effect.sync((): PollerStats => ({ ...state })),
      count,
      move,
      /** `count` as an Effect, for pipelines. */
      add: (counter: Counter, n = 1): Effect.Effect<void> => Effect.sync(() => count(counter, n))
    } as const
  })

export type Stats = Effect.Success<ReturnType<typeof makeStats>>
