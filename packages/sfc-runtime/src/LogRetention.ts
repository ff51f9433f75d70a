import { Effect, Queue } from "effect"
import type { ExecutionLogStore } from "@microdcs/store"

/** Retention runs on every this many opened executions. */
export const RETAIN_EVERY = 100

/**
 * A run that takes longer is given up and logged; nothing is lost by it (each step of 1000
 * executions it finished is done), and the next run goes on from there.
 */
const RUN_TIMEOUT = "60 seconds"

/** What retention did so far (part of the writer's stats). */
export interface RetentionCounts {
  removed: number
  retentionFailures: number
}

/**
 * The execution log's retention for one installed writer, in a fiber of its own: a batch only
 * asks for a run and goes on. It ran inside the batch, under the batch's 5 s budget: on a loaded
 * server a run of a few hundred executions took seconds, the batch's writes were dropped, the
 * queue filled behind it, and the next run had more to remove.
 */
export const makeLogRetention = (store: ExecutionLogStore["Service"], cap: number, counts: RetentionCounts) =>
  Effect.gen(function* () {
    // At most one run waits: asks while one runs fold into the next, which removes everything beyond the cap.
    const asks = yield* Queue.sliding<void>(1)

    /** `count` more executions opened (`before` were counted): every RETAIN_EVERY-th asks for a run. Plain code, never waits. */
    const opened = (before: number, count: number): void => {
      if (Math.floor((before + count) / RETAIN_EVERY) > Math.floor(before / RETAIN_EVERY)) Queue.offerUnsafe(asks, undefined)
    }

    const run = store.retain(cap).pipe(
      Effect.timeout(RUN_TIMEOUT),
      Effect.tap((removed) => Effect.sync(() => void (counts.removed += removed.length))),
      Effect.catchCause((cause) => {
        counts.retentionFailures += 1
        return Effect.logWarning("execution log retention failed", cause)
      })
    )

    /** The retention fiber: one run per ask, for the life of the writer's scope. */
    const loop = Queue.take(asks).pipe(Effect.andThen(run), Effect.forever)

    return { opened, loop } as const
  })

export type LogRetention = Effect.Success<ReturnType<typeof makeLogRetention>>
