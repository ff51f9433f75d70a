import { type JobOrder, type JobResponse, JobStates, makeJobResponse } from "@microdcs/job-state"
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

/**
 * The job response document of a response entry, as the engine stores it (create-only, by its
 * deterministic id): OPC 10031-4 ISA95JobResponseDataType, the actuals from `jobOrder`'s
 * requirements (none when the job order is gone).
 */
export const responseDocument = (entry: JobResponseEntry, jobOrder: JobOrder | undefined): JobResponse =>
  makeJobResponse({
    responseId: entry.responseId,
    jobOrderId: entry.jobId,
    startTime: entry.startTime,
    endTime: entry.endTime,
    state: JobStates[entry.state],
    data: entry.data,
    error: entry.error,
    jobOrder
  })
