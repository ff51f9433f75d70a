import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import type { StateIndexJob } from "@microdcs/publisher"
import { SortedJobs } from "../src/SortedJobs.js"
import { paginate } from "../src/StateIndexPages.js"

const header = { seq: 7, scope: "line-1", published_at: "2024-01-01T00:00:00.000Z" }
const states = ["AllowedToStart_Ready", "Running", "Ended_Completed", "Aborted", "Interrupted_Suspended"]

const jobArb = fc.record({
  job_order_id: fc.string({ unit: "grapheme", minLength: 1, maxLength: 24 }),
  state: fc.constantFrom(...states),
  has_result: fc.boolean()
})

describe("state index pages", () => {
  it("every page fits the limit, and the pages in order list every job once", () => {
    fc.assert(
      fc.property(fc.array(jobArb, { maxLength: 400 }), fc.integer({ min: 1024, max: 8192 }), (jobs, limit) => {
        const pages = Result.getOrThrow(paginate(header, jobs, limit))
        expect(pages.flatMap((p) => p.jobs)).toEqual(jobs)
        pages.forEach((page, n) => {
          expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(limit)
          expect(page).toMatchObject({ ...header, page: n, pages: pages.length, total_jobs: jobs.length })
        })
        // Pages are filled: the first job of a page would not have fitted on the page before.
        for (let n = 1; n < pages.length; n++) {
          const fuller = { ...pages[n - 1]!, jobs: [...pages[n - 1]!.jobs, pages[n]!.jobs[0]!] }
          expect(Buffer.byteLength(JSON.stringify(fuller))).toBeGreaterThan(limit - 3 * String(Number.MAX_SAFE_INTEGER).length)
        }
      })
    )
  })

  it("an index with no jobs is one empty head; a row that fits no page is refused", () => {
    expect(Result.getOrThrow(paginate(header, [], 1024))).toEqual([{ ...header, page: 0, pages: 1, total_jobs: 0, jobs: [] }])
    const huge = { job_order_id: "x".repeat(2000), state: "Running", has_result: false }
    expect(Result.isFailure(paginate(header, [huge], 1024))).toBe(true)
  })

  it("20 000 jobs at the default 256 KiB limit make pages under the limit", () => {
    const jobs: Array<StateIndexJob> = Array.from({ length: 20_000 }, (_, i) => ({
      job_order_id: `job-order-${String(i).padStart(6, "0")}-with-a-longer-identifier-${i}`,
      state: states[i % states.length]!,
      has_result: i % 3 === 0
    }))
    expect(Buffer.byteLength(JSON.stringify({ ...header, jobs }))).toBeGreaterThan(256 * 1024)
    const pages = Result.getOrThrow(paginate(header, jobs, 256 * 1024))
    expect(pages.length).toBeGreaterThan(1)
    for (const page of pages) expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(256 * 1024)
    expect(pages.flatMap((p) => p.jobs)).toEqual(jobs)
  })
})

/** The order of the scope list (`JobOrderDao.list`): priority descending, then id bytes ascending (memcmp, as Valkey compares). */
const listOrder = (jobs: Iterable<{ priority: number; row: StateIndexJob }>) =>
  [...jobs]
    .sort((a, b) => b.priority - a.priority || Buffer.compare(Buffer.from(a.row.job_order_id), Buffer.from(b.row.job_order_id)))
    .map((j) => j.row)

describe("sorted jobs (the incremental state index)", () => {
  // Few ids and priorities, so that updates, moves and ties are frequent; ids beyond the BMP and
  // in U+E000..U+FFFF sort differently by UTF-16 units and by bytes.
  const ids = ["a", "b", "ab", "b\u{1F600}", "b\uFF21", "jo-1", "jo-10", "jo-2", "Z", "é"]
  const op = fc.oneof(
    fc.record({ kind: fc.constant("set" as const), id: fc.constantFrom(...ids), priority: fc.integer({ min: -2, max: 2 }), state: fc.constantFrom(...states), has_result: fc.boolean() }),
    fc.record({ kind: fc.constant("delete" as const), id: fc.constantFrom(...ids) })
  )

  it("after any sequence of updates it equals the index sorted from scratch", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const incremental = SortedJobs.of([])
        const model = new Map<string, { priority: number; row: StateIndexJob }>()
        for (const o of ops) {
          if (o.kind === "set") {
            const job = { priority: o.priority, row: { job_order_id: o.id, state: o.state, has_result: o.has_result } }
            incremental.set(job)
            model.set(o.id, job)
          } else {
            incremental.delete(o.id)
            model.delete(o.id)
          }
          expect(incremental.rows()).toEqual(listOrder(model.values()))
        }
        expect(SortedJobs.of(model.values()).rows()).toEqual(incremental.rows())
        expect(incremental.size).toBe(model.size)
      })
    )
  })
})
