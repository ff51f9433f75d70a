import { Effect, Result } from "effect"
import { type DecodedJobOrder, decodeJobOrderRecord, type MalformedJobOrder, normalizedName, priorityOf } from "@microdcs/job-state"
import { type ConnectionError, type InvalidInput, JobOrderDao, type StoredDocument, type WrongType } from "@microdcs/store"

/** One job order of a scope's list, as the list names it and as its document says. */
export interface ListedJobOrder {
  readonly id: string
  /** Its score in the scope's list (the job order's priority when it was written). */
  readonly listedPriority: number
  /** The document; `undefined` when the list names an id whose document is missing. */
  readonly stored: StoredDocument | undefined
  /** The decoded document; `undefined` with no document. */
  readonly record: Result.Result<DecodedJobOrder, MalformedJobOrder> | undefined
  /** The normalized state (`Running`, `AllowedToStart_Ready`), `null` without a readable document. */
  readonly state: string | null
}

export interface JobOrderListQuery {
  /** Only job orders in this normalized state. */
  readonly state?: string | undefined
  /** Position in the scope's list (priority order) to start at: 0, or the `next` of a previous page. */
  readonly offset: number
  /** Job orders on the page at most. */
  readonly limit: number
  /** With a state filter, stop after reading this many (the page then ends early and `next` goes on); default no bound. */
  readonly maxScanned?: number | undefined
}

export interface JobOrderListPage {
  readonly items: ReadonlyArray<ListedJobOrder>
  /** Where the next page starts, `null` when the list is done. */
  readonly next: number | null
  /** Job orders read to fill the page (more than `items` with a state filter). */
  readonly scanned: number
}

/** Documents read per round trip while a state filter looks for matches. */
const READ_BATCH = 200

const listed = (id: string, listedPriority: number, stored: StoredDocument | undefined): ListedJobOrder => {
  const record = stored === undefined ? undefined : decodeJobOrderRecord(stored.doc)
  return { id, listedPriority, stored, record, state: record !== undefined && Result.isSuccess(record) ? normalizedName(record.success.state) : null }
}

/**
 * A page of a scope's job orders in the list's order (highest priority first, ties by id), each
 * with its document. The documents of a batch come in one pipelined round trip (`getMany`), never
 * one read per job order: a page of 1000 costs a few round trips, however busy the process is.
 * With a state filter it reads on, batch by batch, until the page is full, the list ends or it
 * has read `maxScanned`; `next` is the position right after the last job order it looked at.
 */
export const listJobOrders = (scope: string, query: JobOrderListQuery): Effect.Effect<JobOrderListPage, WrongType | InvalidInput | ConnectionError, JobOrderDao> =>
  Effect.gen(function* () {
    const dao = yield* JobOrderDao
    const items: Array<ListedJobOrder> = []
    let offset = query.offset
    let scanned = 0
    for (;;) {
      const count = query.state === undefined ? query.limit - items.length : READ_BATCH
      const page = yield* dao.list(scope, { offset, count })
      const docs = new Map((yield* dao.getMany(page.items.map((i) => i.id))).map((d) => [d.id, d]))
      for (const [i, item] of page.items.entries()) {
        const row = listed(item.id, item.priority, docs.get(item.id))
        scanned++
        if (query.state === undefined || row.state === query.state) items.push(row)
        if (items.length === query.limit) {
          const last = page.next === null && i === page.items.length - 1
          return { items, next: last ? null : offset + i + 1, scanned }
        }
      }
      if (page.next === null) return { items, next: null, scanned }
      offset = page.next
      if (query.maxScanned !== undefined && scanned >= query.maxScanned) return { items, next: offset, scanned }
    }
  })

/**
 * One job order by id as a row of `scope`'s list, or `undefined` when it is not in the scope. Its
 * priority is its document's, the one the list scores it by (`0` when the document does not decode).
 */
export const listedJobOrder = (scope: string, id: string): Effect.Effect<ListedJobOrder | undefined, WrongType | InvalidInput | ConnectionError, JobOrderDao> =>
  Effect.gen(function* () {
    const [stored] = yield* Effect.flatMap(JobOrderDao, (dao) => dao.getMany([id]))
    if (stored === undefined || stored.scope !== scope) return undefined
    const row = listed(id, 0, stored)
    return row.record !== undefined && Result.isSuccess(row.record) ? { ...row, listedPriority: priorityOf(row.record.success.jobOrder) } : row
  })
