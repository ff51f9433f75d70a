import { Effect, Metric, Ref } from "effect"

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
  /** Handlers running now. */
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
 * The counters of one poller: a Ref for `stats` (per instance, exact) and a process-wide Metric
 * tagged with kind and group for whatever exports metrics.
 */
export const makeStats = (kind: string, group: string) =>
  Effect.gen(function* () {
    const state = yield* Ref.make(zero)
    const add = (counter: Counter, n = 1): Effect.Effect<void> =>
      n === 0
        ? Effect.void
        : Ref.update(state, (s) => ({ ...s, [counter]: s[counter] + n })).pipe(
            Effect.zipRight(Metric.incrementBy(metrics[counter].pipe(Metric.tagged("kind", kind), Metric.tagged("group", group)), n))
          )
    const gauge = (field: "inFlight" | "scopes", delta: number): Effect.Effect<void> =>
      Ref.update(state, (s) => ({ ...s, [field]: s[field] + delta }))
    return { get: Ref.get(state), add, gauge } as const
  })

export type Stats = Effect.Effect.Success<ReturnType<typeof makeStats>>
