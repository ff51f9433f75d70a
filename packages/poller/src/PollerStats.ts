import { Array as Arr, Effect, FiberRef, Metric, MetricLabel } from "effect"

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

const metrics: Record<Counter, Metric.Metric.Counter<number>> = {
  read: Metric.counter("microdcs_poller_read_total"),
  processed: Metric.counter("microdcs_poller_processed_total"),
  failed: Metric.counter("microdcs_poller_failed_total"),
  retried: Metric.counter("microdcs_poller_retried_total"),
  deadLettered: Metric.counter("microdcs_poller_dead_lettered_total"),
  claimed: Metric.counter("microdcs_poller_claimed_total"),
  claimDeleted: Metric.counter("microdcs_poller_claim_deleted_total"),
  trimmed: Metric.counter("microdcs_poller_trimmed_total")
}

/**
 * The counters of one poller: a plain record for `stats` (per instance, exact) and a process-wide
 * Metric tagged with kind and group for whatever exports metrics. Every update is synchronous and
 * passes one label array built here: the poller counts per batch, and an Effect per count, or a
 * `Metric.tagged` metric (which merges its labels into a new array, so Effect's hook cache never
 * hits and every update builds and hashes a metric key), was a visible share of its CPU.
 */
export const makeStats = (kind: string, group: string) =>
  Effect.gen(function* () {
    // The metric labels of the fiber that starts the poller (Effect.tagMetrics), as Metric.increment would add them.
    const labels = yield* FiberRef.get(FiberRef.currentMetricLabels)
    const state: { -readonly [K in keyof PollerStats]: number } = { ...zero }
    // The same labels, in the same order, as `metric.pipe(Metric.tagged("kind", kind), Metric.tagged("group", group))` adds.
    const tags = Arr.union([MetricLabel.make("kind", kind)], Arr.union([MetricLabel.make("group", group)], labels))
    /** Counts `n` now, from plain code. */
    const count = (counter: Counter, n = 1): void => {
      if (n === 0) return
      state[counter] += n
      metrics[counter].unsafeUpdate(n, tags)
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
