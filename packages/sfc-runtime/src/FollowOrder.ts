import { Effect } from "effect"
import { StateMoved } from "@microdcs/store"
import type { Applied } from "./ApplyOutcome.js"
import { Executions } from "./Executions.js"
import { JobOrderTransitions, type LoadedJobOrder } from "./JobOrderTransitions.js"

/** Rounds of `followHold` before giving up (the entry is then retried by the poller). */
const MAX_HOLD_ROUNDS = 10

/**
 * Pause and Resume entries of one job can be handled concurrently (one read, several handlers),
 * so they reach the execution's CAS in either order. The execution therefore follows the job
 * order's current state, not the change word, and checks after its write that the order did not
 * move meanwhile: the last write to the execution is always based on the order's last state.
 * A sub-recipe's child follows its root job's order (`orderJobId`).
 */
export const followHold = (jobId: string, orderJobId = jobId) =>
  Effect.gen(function* () {
    const jobOrders = yield* JobOrderTransitions
    const executions = yield* Executions
    for (let round = 0; round < MAX_HOLD_ROUNDS; round++) {
      const order = yield* jobOrders.load(orderJobId)
      // The order's last change put it where it is: its origin is who paused or resumed it.
      if (order?.state.main === "Interrupted") yield* executions.apply(jobId, { type: "pause", origin: order.origin })
      else if (order?.state.main === "Running") yield* executions.apply(jobId, { type: "resume", origin: order.origin })
      if ((yield* jobOrders.load(orderJobId))?.version === order?.version) return
    }
    return yield* new StateMoved({ key: jobId, attempts: MAX_HOLD_ROUNDS })
  })

/** Rounds of `followOrder` before giving up (the entry is then retried by the poller). */
const MAX_ORDER_ROUNDS = 10

/**
 * Feeds the job order as it is now to the job's execution (`{ type: "order" }`: the fields its
 * conditions read, `order.*`; a waiting step is evaluated again), when both exist. Feeds of one
 * job can run concurrently (a start's, the Update entries' followers) and reach the loop in any
 * order, so each reads the job order again after its write and feeds again when it moved: the
 * last feed to land is of the job order's last version. A feed that changes no field writes
 * nothing.
 */
export const followOrder = (jobId: string) =>
  Effect.gen(function* () {
    const jobOrders = yield* JobOrderTransitions
    const executions = yield* Executions
    let order = yield* jobOrders.load(jobId)
    for (let round = 0; round < MAX_ORDER_ROUNDS; round++) {
      if (order === undefined) return
      if ((yield* executions.apply(jobId, { type: "order", order: order.jobOrder }))._tag === "NoExecution") return
      const again = yield* jobOrders.load(jobId)
      if (again?.version === order.version) return
      order = again
    }
    return yield* new StateMoved({ key: jobId, attempts: MAX_ORDER_ROUNDS })
  })

/**
 * After a start that may have missed a change of its job order (`startFollows`), the execution
 * follows where the job order is now, as the change's own follower would have had the execution
 * existed: retired (Cancel, Clear) or gone removes it, Aborted aborts it, Ended stops it, Interrupted pauses
 * it (each a no-op on an execution that already ended), and otherwise the order's fields are fed.
 */
export const followAfterStart = (jobId: string) =>
  Effect.gen(function* () {
    const order = yield* (yield* JobOrderTransitions).load(jobId)
    const executions = yield* Executions
    const main = order?.state.main
    // Retired (Cancel, Clear: EndState) or gone meanwhile: removed as their follower removes it.
    if (order === undefined || main === "EndState") return yield* executions.remove(jobId).pipe(Effect.asVoid, Effect.catchTag("NotFound", () => Effect.void))
    if (main === "Aborted") return yield* Effect.asVoid(executions.apply(jobId, { type: "abort", origin: order.origin }))
    if (main === "Ended") return yield* Effect.asVoid(executions.apply(jobId, { type: "stop", origin: order.origin }))
    if (main === "Interrupted") return yield* followHold(jobId)
    return yield* followOrder(jobId)
  })

/**
 * Whether a start must feed the job order after its create (`followOrder`), because the
 * execution may hold an older job order than the store. A start reads the job order (version
 * `read`), then creates the execution from it; an MES Update of the job order is followed by
 * its change entry's handler, which feeds the job order to the execution if there is one:
 * - Update before the read: the read has its fields.
 * - Update after the read, before the create's script: its follower may have found no
 *   execution; the create's script sees a newer job order version (`jobOrderSeen`, from the
 *   reply's Run move or send gate read, no extra round trip) or cannot tell: the start feeds.
 * - Update after the create's script: its follower reads the job order after the Update and
 *   feeds it to the execution, which exists by then.
 * When the create's script saw the version read, no Update landed in between: nothing is read.
 * A start that finds the execution created (or the job running) cannot tell which job order the
 * create had (another instance's, or this start's own earlier attempt whose feed failed): it
 * feeds too. These are redeliveries, off the hot path.
 */
export const startFollows = (read: LoadedJobOrder | undefined, applied: Applied | undefined): boolean => {
  if (applied?._tag === "Written") return applied.jobOrderSeen !== read?.version
  if (applied?._tag === "Duplicate") return true
  return applied === undefined && (read?.state.main === "Running" || read?.state.main === "Interrupted")
}
