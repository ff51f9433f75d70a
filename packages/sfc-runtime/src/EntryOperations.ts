import type { JobOrderEntry, JobResponseEntry } from "@microdcs/sfc"

/** The operation id of a job response's put: the same for every delivery of its entry. */
export const responseOperation = (responseId: string) => `sfc:${responseId}`

/** The operation id of a job order entry's move: the same for every delivery of the entry. */
export const jobOrderOperation = (jobId: string, version: string, trigger: JobOrderEntry["trigger"]) => `sfc:${jobId}:${version}:${trigger}`

/**
 * The operation id the handler uses for a move or response entry of the write at `version`: the
 * writer that carries the entry out marks this id, and the batch skips an entry by it.
 */
export const entryOperation = (entry: JobOrderEntry | JobResponseEntry, version: string): string =>
  entry.type === "joborder" ? jobOrderOperation(entry.jobId, version, entry.trigger) : responseOperation(entry.responseId)

/** The job response document of a response entry, as the engine stores it (create-only, by its deterministic id). */
export const responseDocument = (entry: JobResponseEntry) => ({
  ID: entry.responseId,
  JobOrderID: entry.jobId,
  StartTime: new Date(entry.startTime).toISOString(),
  EndTime: new Date(entry.endTime).toISOString(),
  JobState: entry.state,
  Data: entry.data,
  ...(entry.error !== undefined ? { Error: entry.error } : {})
})
