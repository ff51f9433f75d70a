import { Effect } from "effect"
import { listedJobOrder, listJobOrders } from "@microdcs/job-control"
import { jobOrderRow } from "./JobOrderRow.js"

/** Job orders read per request at most while filtering by state: a page answers in bounded time and says where to go on. */
const SCAN_PER_REQUEST = 2_000

export interface ScopeQuery {
  /** Only job orders in this normalized state (`Running`, `AllowedToStart_Ready`). */
  readonly state?: string | undefined
  /** An exact job order id: that one, if it is in the scope. */
  readonly id?: string | undefined
  /** Offset in the scope's list (priority order), from a previous page. */
  readonly offset: number
  readonly limit: number
}

/**
 * A page of the scope's job orders, in the list's order (highest priority first), paged on the
 * server: with a state filter it reads on until the page is full or it has read its share, and
 * `next` says where the next request goes on (`null`: the list is done). `scanned` tells how
 * far the filter looked. An id search finds that job order with its own priority.
 */
export const scopeJobOrders = (scope: string, q: ScopeQuery) =>
  Effect.gen(function* () {
    if (q.id !== undefined) {
      const found = yield* listedJobOrder(scope, q.id)
      return { items: found === undefined ? [] : [jobOrderRow(found)], next: null, scanned: found === undefined ? 0 : 1 }
    }
    const page = yield* listJobOrders(scope, { state: q.state, offset: q.offset, limit: q.limit, maxScanned: SCAN_PER_REQUEST })
    return { items: page.items.map(jobOrderRow), next: page.next === null ? null : String(page.next), scanned: page.scanned }
  })
