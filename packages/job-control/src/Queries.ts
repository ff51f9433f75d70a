import { Effect } from "effect"
import { JobOrderDao, JobResponseDao } from "@microdcs/store"
import { succeeded, unknownJobOrder } from "./Answer.js"
import type { Command } from "./Command.js"
import { JobControlOptions } from "./JobControlOptions.js"

type ByOrder = Extract<Command, { readonly _tag: "ResponseByOrder" }>
type ByState = Extract<Command, { readonly _tag: "ResponsesByState" }>

/** Stored documents passed the store's JSON check on write, so this only guards against tampering. */
const parseStored = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
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
   * an id unknown in the scope is UNKNOWN_JOB_ORDER_ID.
   */
  const responseByOrder = (command: ByOrder) =>
    Effect.gen(function* () {
      const { jobOrderId: id, scope } = command
      const response = yield* responses.byOrder(id).pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined)))
      if (response !== undefined && response.scope === scope) return succeeded({ JobOrderID: id, JobResponse: parseStored(response.doc) })
      const order = yield* jobOrders.get(id).pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined)))
      return order !== undefined && order.scope === scope ? succeeded({ JobOrderID: id }) : unknownJobOrder(id, scope)
    })

  /**
   * `{JobOrderState, Cursor?, PageSize?}` → `{JobOrderState, JobResponses, NextCursor?}`: one
   * SSCAN page of the state's index. A page may be short or even empty while NextCursor is set
   * (SSCAN's COUNT is a hint); the caller continues until NextCursor is absent.
   */
  const responsesByState = (command: ByState) =>
    Effect.gen(function* () {
      const { scope, state } = command
      const page = yield* responses.byState(scope, state, command.cursor, command.pageSize ?? options.statePageSize)
      // SSCAN may repeat an id across a rehash; a response may have moved on since the scan.
      const documents = yield* responses.getMany([...new Set(page.ids)])
      const current = documents.filter((d) => d.scope === scope && d.state === state)
      return succeeded({
        JobOrderState: state,
        JobResponses: current.map((d) => parseStored(d.doc)),
        ...(page.next !== null ? { NextCursor: page.next } : {})
      })
    })

  return { responseByOrder, responsesByState } as const
})
