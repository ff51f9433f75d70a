import type { StateIndexJob } from "./PublisherEvents.js"

/** One row of a scope's state index and its score in the scope's job order list. */
export interface IndexedJob {
  readonly priority: number
  readonly row: StateIndexJob
}

const isSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdfff

/**
 * Compares ids in UTF-8 byte order, which is code point order, without encoding them: UTF-16
 * code unit order agrees except where a surrogate (a code point from U+10000) meets a unit from
 * U+E000, which it must follow. (An encoded copy per job, as this once kept, pinned an 8 KB
 * Buffer pool slab per job for as long as the job was in the index.)
 */
export const compareUtf8 = (a: string, b: string): number => {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    if (isSurrogate(x) !== isSurrogate(y) && Math.max(x, y) >= 0xe000) return isSurrogate(x) ? 1 : -1
    return x - y
  }
  return a.length - b.length
}

/**
 * The order of `JobOrderDao.list` (`list-joborder-1.lua`): highest priority first, equal
 * priorities by id in ascending byte order, as Valkey compares members. Negative when `a` comes
 * first. It must stay the list's order: a full rebuild takes the list's.
 */
const listOrder = (a: IndexedJob, b: IndexedJob): number => b.priority - a.priority || compareUtf8(a.row.job_order_id, b.row.job_order_id)

/**
 * The rows of one scope's state index, kept in list order in memory, so that a batch costs the
 * reads of the jobs it touched instead of a read of every job in the scope. An update is a
 * binary search and one splice; the full list is only read again when the publisher cannot be
 * sure this copy is current (a new session, a reset cursor).
 */
export class SortedJobs {
  private readonly entries: Array<IndexedJob>
  private readonly byId: Map<string, IndexedJob>

  private constructor(entries: Array<IndexedJob>) {
    this.entries = entries
    this.byId = new Map(entries.map((e) => [e.row.job_order_id, e]))
  }

  /** From rows in any order; an id given twice keeps its first row. */
  static of(jobs: Iterable<IndexedJob>): SortedJobs {
    const seen = new Map<string, IndexedJob>()
    for (const job of jobs) if (!seen.has(job.row.job_order_id)) seen.set(job.row.job_order_id, job)
    return new SortedJobs([...seen.values()].sort(listOrder))
  }

  get size(): number {
    return this.entries.length
  }

  /** Where `entry` is or would go: the first index whose entry does not come before it. */
  private position(entry: IndexedJob): number {
    let low = 0
    let high = this.entries.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (listOrder(this.entries[mid]!, entry) < 0) low = mid + 1
      else high = mid
    }
    return low
  }

  /** Puts a job's current row in its place (a new job, a new state or a new priority). */
  set(job: IndexedJob): void {
    this.delete(job.row.job_order_id)
    this.entries.splice(this.position(job), 0, job)
    this.byId.set(job.row.job_order_id, job)
  }

  /** Takes a job out (retired, deleted, unreadable); nothing happens when it is not there. */
  delete(id: string): void {
    const entry = this.byId.get(id)
    if (entry === undefined) return
    this.entries.splice(this.position(entry), 1)
    this.byId.delete(id)
  }

  /** The rows in list order. */
  rows(): ReadonlyArray<StateIndexJob> {
    return this.entries.map((e) => e.row)
  }
}
