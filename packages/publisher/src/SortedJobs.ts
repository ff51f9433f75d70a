import type { StateIndexJob } from "./PublisherEvents.js"

/** One row of a scope's state index and its score in the scope's job order list. */
export interface IndexedJob {
  readonly priority: number
  readonly row: StateIndexJob
}

interface Entry extends IndexedJob {
  /** Valkey orders equal scores by the member's bytes, not by UTF-16 code units. */
  readonly idBytes: Buffer
}

/**
 * The order of `JobOrderDao.list` (`list-joborder-1.lua`): highest priority first, equal
 * priorities by id in ascending byte order, as Valkey compares members. Negative when `a` comes
 * first. It must stay the list's order: a full rebuild takes the list's.
 */
const listOrder = (a: Entry, b: Entry): number => b.priority - a.priority || Buffer.compare(a.idBytes, b.idBytes)

const entryOf = (job: IndexedJob): Entry => ({ ...job, idBytes: Buffer.from(job.row.job_order_id, "utf8") })

/**
 * The rows of one scope's state index, kept in list order in memory, so that a batch costs the
 * reads of the jobs it touched instead of a read of every job in the scope. An update is a
 * binary search and one splice; the full list is only read again when the publisher cannot be
 * sure this copy is current (a new session, a reset cursor).
 */
export class SortedJobs {
  private readonly entries: Array<Entry>
  private readonly byId: Map<string, Entry>

  private constructor(entries: Array<Entry>) {
    this.entries = entries
    this.byId = new Map(entries.map((e) => [e.row.job_order_id, e]))
  }

  /** From rows in any order; an id given twice keeps its first row. */
  static of(jobs: Iterable<IndexedJob>): SortedJobs {
    const seen = new Map<string, Entry>()
    for (const job of jobs) if (!seen.has(job.row.job_order_id)) seen.set(job.row.job_order_id, entryOf(job))
    return new SortedJobs([...seen.values()].sort(listOrder))
  }

  get size(): number {
    return this.entries.length
  }

  /** Where `entry` is or would go: the first index whose entry does not come before it. */
  private position(entry: Entry): number {
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
    const entry = entryOf(job)
    this.entries.splice(this.position(entry), 0, entry)
    this.byId.set(job.row.job_order_id, entry)
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
