import { Effect } from "effect"
import { listedJobOrder, listJobOrders } from "@microdcs/job-control"
import { jobOrderRow } from "./JobOrderRow.js"
import { jobOrdersInState } from "./ScopeStateSearch.js"

export interface ScopeQuery {
  /** Only job orders in this normalized state (`Running`, `AllowedToStart_Ready`). */
  readonly state?: string | undefined
  /** An exact job order id: that one, if it is in the scope. */
  readonly id?: string | undefined
  /** Where the page starts: "0" (the first page) or the `next` of a previous page. */
  readonly cursor: string
  readonly limit: number
}

/** Why a cursor of the unfiltered list is refused, or `undefined` (a state filter's cursor is checked by the search). */
export const scopeCursorProblem = (q: { readonly state?: string | undefined; readonly cursor: string }): string | undefined => {
  if (q.state !== undefined) return undefined
  const offset = Number(q.cursor)
  return Number.isInteger(offset) && offset >= 0 ? undefined : "cursor must come from a previous page"
}

/**
 * A page of the scope's job orders, paged on the server: unfiltered in the list's order (highest
 * priority first); with a state filter from the search index, newest first, with the total in that
 * state. `next` says where the next request goes on (`null`: done). An id search finds that job
 * order with its own priority.
 */
export const scopeJobOrders = (scope: string, q: ScopeQuery) =>
  Effect.gen(function* () {
    if (q.id !== undefined) {
      const found = yield* listedJobOrder(scope, q.id)
      return { items: found === undefined ? [] : [jobOrderRow(found)], next: null, scanned: found === undefined ? 0 : 1 }
    }
    if (q.state !== undefined) {
      const page = yield* jobOrdersInState(scope, q.state, q.cursor, q.limit)
      return { ...page, scanned: page.items.length }
    }
    const page = yield* listJobOrders(scope, { offset: Number(q.cursor), limit: q.limit })
    return { items: page.items.map(jobOrderRow), next: page.next === null ? null : String(page.next), scanned: page.scanned }
  })
