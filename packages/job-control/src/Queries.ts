import { Effect, Result } from "effect"
import { decodeJobResponseText, type JobResponse, ReturnStatus } from "@microdcs/job-state"
import { JobOrderDao, JobResponseDao, type JobResponseDocument } from "@microdcs/store"
import { refused, succeeded, unknownJobOrder } from "./Answer.js"
import type { Command } from "./Command.js"
import { JobControlOptions } from "./JobControlOptions.js"

type ByOrder = Extract<Command, { readonly _tag: "ResponseByOrder" }>
type ByState = Extract<Command, { readonly _tag: "ResponsesByState" }>

/**
 * A stored response in the current form (one the previous release stored is upgraded), or
 * `undefined` after a warning: a damaged document is left out of a reply, never passed on.
 */
const decodeStored = (stored: JobResponseDocument): Effect.Effect<JobResponse | undefined> => {
  const decoded = decodeJobResponseText(stored.doc)
  if (Result.isSuccess(decoded)) return Effect.succeed(decoded.success)
  return Effect.logWarning("job response left out of a query reply: it does not decode").pipe(
    Effect.annotateLogs({ id: stored.id, problems: decoded.failure.problems.join("; ") }),
    Effect.as(undefined)
  )
}

/**
 * The two Machinery Jobs queries (OPC 40001-3 RequestJobResponseByJobOrderID / ...ByJobOrderState),
 * answered from the job response indexes. Both are scoped: a response of another scope is not
 * there for this caller.
 */
export const makeQueries = Effect.gen(function* () {
  const responses = yield* JobResponseDao
  const jobOrders = yield* JobOrderDao
  const options = yield* JobControlOptions

  /**
   * `{JobOrderID}` → `{JobOrderID, JobResponse}`. A job order known in the scope but without a
   * response yet (not started, or retired before it ran) answers NO_ERROR without JobResponse;
   * an id unknown in the scope is UNKNOWN_JOB_ORDER_ID; a response that does not decode is
   * INVALID_JOB_ORDER_STATUS (`MalformedJobResponse`), as a job order that does not is for a method.
   */
  const responseByOrder = (command: ByOrder) =>
    Effect.gen(function* () {
      const { jobOrderId: id, scope } = command
      const response = yield* responses.byOrder(id).pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined)))
      if (response !== undefined && response.scope === scope) {
        const decoded = yield* decodeStored(response)
        return decoded !== undefined
          ? succeeded({ JobOrderID: id, JobResponse: decoded })
          : refused(ReturnStatus.INVALID_JOB_ORDER_STATUS, "MalformedJobResponse", `the job response of job order ${id} does not decode`, { JobOrderID: id })
      }
      const order = yield* jobOrders.get(id).pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined)))
      return order !== undefined && order.scope === scope ? succeeded({ JobOrderID: id }) : unknownJobOrder(id, scope)
    })

  /**
   * `{JobOrderState, Cursor?, PageSize?}` → `{JobOrderState, JobResponses, NextCursor?}`: one
   * SSCAN page of the state's index. A page may be short or even empty while NextCursor is set
   * (SSCAN's COUNT is a hint); the caller continues until NextCursor is absent. A response that
   * does not decode is left out (and logged).
   */
  const responsesByState = (command: ByState) =>
    Effect.gen(function* () {
      const { scope, state } = command
      const page = yield* responses.byState(scope, state, command.cursor, command.pageSize ?? options.statePageSize)
      // SSCAN may repeat an id across a rehash; a response may have moved on since the scan.
      const documents = yield* responses.getMany([...new Set(page.ids)])
      const current = documents.filter((d) => d.scope === scope && d.state === state)
      const decoded = yield* Effect.forEach(current, decodeStored)
      return succeeded({
        JobOrderState: state,
        JobResponses: decoded.filter((r) => r !== undefined),
        ...(page.next !== null ? { NextCursor: page.next } : {})
      })
    })

  return { responseByOrder, responsesByState } as const
})
