import { Effect, Either, Option } from "effect"
import { decodeJobOrderRecord, normalizedName } from "@microdcs/job-state"
import { JobOrderDao } from "@microdcs/store"

/** One row of the scope page. */
export interface JobOrderRow {
  readonly id: string
  readonly priority: number
  readonly version: number | null
  readonly state: string | null
}

/** Job orders read per request at most while filtering by state: a page answers in bounded time and says where to go on. */
const SCAN_PER_REQUEST = 2_000
const READ_BATCH = 200

export interface ScopeQuery {
  /** Only job orders in this normalized state (`Running`, `AllowedToStart_Ready`). */
  readonly state?: string | undefined
  /** An exact job order id: that one, if it is in the scope. */
  readonly id?: string | undefined
  /** Offset in the scope's list (priority order), from a previous page. */
  readonly offset: number
  readonly limit: number
}

const stateOf = (doc: string): string | null => {
  const decoded = decodeJobOrderRecord(doc)
  return Either.isRight(decoded) ? normalizedName(decoded.right.state) : null
}

/**
 * A page of the scope's job orders, in the list's order (highest priority first), paged on the
 * server: with a state filter it reads on until the page is full or it has read its share, and
 * `next` says where the next request goes on (`null`: the list is done). `scanned` tells how
 * far the filter looked.
 */
export const scopeJobOrders = (scope: string, q: ScopeQuery) =>
  Effect.gen(function* () {
    const dao = yield* JobOrderDao
    if (q.id !== undefined) {
      const doc = yield* dao.get(q.id).pipe(Effect.option)
      const found = Option.isSome(doc) && doc.value.scope === scope
      const items: ReadonlyArray<JobOrderRow> = found ? [{ id: q.id, priority: 0, version: doc.value.version, state: stateOf(doc.value.doc) }] : []
      return { items, next: null, scanned: found ? 1 : 0 }
    }
    const items: Array<JobOrderRow> = []
    let offset = q.offset
    let scanned = 0
    for (;;) {
      const count = q.state === undefined ? q.limit - items.length : READ_BATCH
      const page = yield* dao.list(scope, { offset, count })
      const docs = yield* dao.getMany(page.items.map((i) => i.id))
      const byId = new Map(docs.map((d) => [d.id, d]))
      for (const [i, item] of page.items.entries()) {
        const doc = byId.get(item.id)
        const row = { id: item.id, priority: item.priority, version: doc?.version ?? null, state: doc === undefined ? null : stateOf(doc.doc) }
        scanned++
        if (q.state === undefined || row.state === q.state) items.push(row)
        if (items.length === q.limit) {
          const next = offset + i + 1
          const last = page.next === null && i === page.items.length - 1
          return { items, next: last ? null : String(next), scanned }
        }
      }
      if (page.next === null) return { items, next: null, scanned }
      offset = page.next
      if (scanned >= SCAN_PER_REQUEST) return { items, next: String(offset), scanned }
    }
  })
