import { rememberBounded } from "./Occurrence.js"
import type { EventScript } from "./StationScript.js"
import { fillTemplate } from "./Templates.js"

/** How many jobs' emission counts are kept; a job that ended is forgotten at once. */
const JOBS_REMEMBERED = 10_000

/**
 * The data of each emission of a scripted event: a job's first emissions take the `sequence` in
 * order, every `oneIn.every`-th emission of the type (over all jobs) takes `oneIn.data`, any
 * other the event's `data`; placeholders are filled in. Counting at the moment an event is set
 * off keeps a run deterministic, whenever the event is then sent.
 */
export interface EventDataSource {
  readonly next: (script: EventScript, type: string, scope: string, jobId: string | undefined) => unknown
  /** Drops the counts of a job that ended. */
  readonly forget: (scope: string, jobId: string) => void
}

export const makeEventData = (): EventDataSource => {
  const byType = new Map<string, number>()
  const byJob = new Map<string, Map<string, number>>()
  const jobKey = (scope: string, jobId: string | undefined) => `${scope}\u0000${jobId ?? ""}`
  return {
    next: (script, type, scope, jobId) => {
      const total = (byType.get(type) ?? 0) + 1
      byType.set(type, total)
      const key = jobKey(scope, jobId)
      const counts = byJob.get(key) ?? rememberBounded(byJob, key, new Map<string, number>(), JOBS_REMEMBERED)
      const ofJob = (counts.get(type) ?? 0) + 1
      counts.set(type, ofJob)
      const chosen =
        ofJob <= script.sequence.length
          ? script.sequence[ofJob - 1]
          : script.oneIn !== undefined && total % script.oneIn.every === 0
            ? script.oneIn.data
            : script.data
      return fillTemplate(chosen, { jobid: jobId, scope, type })
    },
    forget: (scope, jobId) => void byJob.delete(jobKey(scope, jobId))
  }
}
