import { Effect, FiberRef, Metric } from "effect"

/** What one poller has done since it started. */
export interface PollerStats {
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
 * Metric tagged with kind and group for whatever exports metrics. The metrics are tagged once here
 * and every update is synchronous: the poller counts per entry, and an Effect (or a freshly tagged
 * metric) per count was a visible share of its CPU per entry.
 */
export const makeStats = (kind: string, group: string) =>
  Effect.gen(function* () {
    // The metric labels of the fiber that starts the poller (Effect.tagMetrics), as Metric.increment would add them.
    const labels = yield* FiberRef.get(FiberRef.currentMetricLabels)
    const state: { -readonly [K in keyof PollerStats]: number } = { ...zero }
    const tagged = {} as Record<Counter, Metric.Metric.Counter<number>>
    for (const counter of Object.keys(metrics) as Array<Counter>) {
      tagged[counter] = metrics[counter].pipe(Metric.tagged("kind", kind), Metric.tagged("group", group))
    }
    /** Counts `n` now, from plain code. */
    const count = (counter: Counter, n = 1): void => {
      if (n === 0) return
      state[counter] += n
      tagged[counter].unsafeUpdate(n, labels)
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

export type Stats = Effect.Effect.Success<ReturnType<typeof makeStats>>
