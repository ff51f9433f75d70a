import { Effect, Metric, Ref } from "effect"

/** What one publisher instance has done since it started. */
export interface PublisherStats {
  /** Retained messages sent: order, result and state-index topics. */
  readonly published: number
  /** Zero-byte retained messages sent to delete order and result topics. */
  readonly deleted: number
  /** Change batches published and acknowledged by saving the cursor. */
  readonly batches: number
  /** Times this instance took the lease and became the active publisher. */
  readonly activations: number
  /** Messages not published because they are over the broker's Maximum Packet Size (logged as errors). */
  readonly tooLarge: number
  /** Holding the lease and publishing now. */
  readonly active: boolean
}

export type Counter = "published" | "deleted" | "batches" | "activations" | "tooLarge"

const zero: PublisherStats = { published: 0, deleted: 0, batches: 0, activations: 0, tooLarge: 0, active: false }

const metrics: Record<Counter, Metric.Counter<number>> = {
  published: Metric.counter("microdcs_publisher_published_total"),
  deleted: Metric.counter("microdcs_publisher_deleted_total"),
  batches: Metric.counter("microdcs_publisher_batches_total"),
  activations: Metric.counter("microdcs_publisher_activations_total"),
  tooLarge: Metric.counter("microdcs_publisher_too_large_total")
}

const activeGauge = Metric.gauge("microdcs_publisher_active")

/**
 * The counters of one publisher: a Ref for `stats` (per instance, exact) and process-wide
 * Metrics with the instance id as an attribute for whatever exports metrics.
 */
export const makeStats = (instanceId: string) =>
  Effect.gen(function* () {
    const state = yield* Ref.make(zero)
    const add = (counter: Counter, n = 1): Effect.Effect<void> =>
      Ref.update(state, (s) => ({ ...s, [counter]: s[counter] + n })).pipe(
        Effect.andThen(Metric.update(Metric.withAttributes(metrics[counter], { instance: instanceId }), n))
      )
    const setActive = (active: boolean): Effect.Effect<void> =>
      Ref.update(state, (s) => ({ ...s, active })).pipe(
        Effect.andThen(Metric.update(Metric.withAttributes(activeGauge, { instance: instanceId }), active ? 1 : 0))
      )
    return { get: Ref.get(state), isActive: Ref.get(state).pipe(Effect.map((s) => s.active)), add, setActive } as const
  })

export type Stats = Effect.Success<ReturnType<typeof makeStats>>
