import { Effect, FiberMap, type Scope } from "effect"
import type { PublishFailure } from "@microdcs/cloudevents-mqtt"
import type { PlannedEvent, PlannedTrigger } from "./CommandAnswers.js"
import { rememberBounded } from "./Occurrence.js"

/**
 * The pull events commands set off, each sent again with the SAME CloudEvent id until its job
 * ends. A station that only hears commands cannot tell when its job waits for the event: the
 * island ignores an event that arrives before the job waits for it, and recognises a second copy
 * of one it applied (by source and id) as a duplicate however far the job has moved on since. So
 * the copies cost nothing once one was taken, and one of them arrives while the job waits.
 *
 * The copies stop when the job ends (`jobEnded`), when the same job's next event of that type
 * replaces it (in the rework loop, the second torque check replaces the first), or after
 * `resend.forMs`.
 */
export interface TriggeredEvents {
  readonly trigger: (scope: string, jobId: string, event: PlannedTrigger) => Effect.Effect<void>
  readonly jobEnded: (scope: string, jobId: string) => Effect.Effect<void>
}

export type SendEvent = (scope: string, event: PlannedEvent, jobId: string, copy: number) => Effect.Effect<void, PublishFailure>

/** How many ended jobs are remembered, so an event set off after its job's end is not sent at all. */
const ENDED_REMEMBERED = 10_000

const jobPrefix = (scope: string, jobId: string) => `${scope}\u0000${jobId}\u0000`

const sendCopies = (send: SendEvent, scope: string, jobId: string, event: PlannedTrigger) =>
  Effect.gen(function* () {
    yield* Effect.sleep(event.afterMs)
    const { everyMs, forMs } = event.resend
    const until = Date.now() + forMs
    // A copy that did not reach the broker is logged; the next one may.
    const copy = (n: number) => send(scope, event, jobId, n).pipe(Effect.catch((error) => Effect.logWarning("island-sim: event not sent", error)))
    yield* copy(1)
    if (everyMs <= 0) return
    for (let n = 2; Date.now() + everyMs <= until; n++) {
      yield* Effect.sleep(everyMs)
      yield* copy(n)
    }
  })

export const makeTriggeredEvents = (send: SendEvent): Effect.Effect<TriggeredEvents, never, Scope.Scope> =>
  Effect.gen(function* () {
    const running = yield* FiberMap.make<string>()
    const ended = new Map<string, true>()
    return {
      trigger: (scope, jobId, event) =>
        ended.has(jobPrefix(scope, jobId))
          ? Effect.void
          : Effect.asVoid(FiberMap.run(running, `${jobPrefix(scope, jobId)}${event.type}`, sendCopies(send, scope, jobId, event))),
      jobEnded: (scope, jobId) =>
        Effect.suspend(() => {
          const prefix = jobPrefix(scope, jobId)
          rememberBounded(ended, prefix, true, ENDED_REMEMBERED)
          const keys = [...running].flatMap(([key]) => (key.startsWith(prefix) ? [key] : []))
          return Effect.forEach(keys, (key) => FiberMap.remove(running, key), { discard: true })
        })
    }
  })
