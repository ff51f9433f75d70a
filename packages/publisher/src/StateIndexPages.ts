import { Result } from "effect"
import type { StateIndex, StateIndexJob } from "./PublisherEvents.js"

/** What every page of one index shares. */
export interface StateIndexHeader {
  readonly seq: number
  readonly scope: string
  readonly published_at: string
}

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8")

/**
 * Cuts a state index into pages whose JSON payload (what the MQTT connection sends and checks
 * against its `maxPayloadBytes`) is at most `maxPayloadBytes` each, filling each page before
 * starting the next. The page envelope is measured with the widest numbers it can carry, so the
 * page count written into it cannot push a page over. An index with no jobs is one empty page.
 * Fails, naming the job, when one row alone does not fit.
 */
export const paginate = (
  header: StateIndexHeader,
  jobs: ReadonlyArray<StateIndexJob>,
  maxPayloadBytes: number
): Result.Result<ReadonlyArray<StateIndex>, string> => {
  const widest = Number.MAX_SAFE_INTEGER
  const envelope = jsonBytes({ ...header, page: widest, pages: widest, total_jobs: widest, jobs: [] })
  const budget = maxPayloadBytes - envelope
  const cuts: Array<Array<StateIndexJob>> = [[]]
  let used = 0
  for (const job of jobs) {
    const size = jsonBytes(job)
    if (size > budget) {
      return Result.fail(`the state index row of job order ${job.job_order_id} (${size} bytes) does not fit a page of ${maxPayloadBytes} bytes`)
    }
    let current = cuts[cuts.length - 1]!
    // A comma before every row but a page's first.
    if (current.length > 0 && used + 1 + size > budget) {
      current = []
      cuts.push(current)
      used = 0
    }
    used += (current.length > 0 ? 1 : 0) + size
    current.push(job)
  }
  return Result.succeed(
    cuts.map((page, n): StateIndex => ({ ...header, page: n, pages: cuts.length, total_jobs: jobs.length, jobs: page }))
  )
}
