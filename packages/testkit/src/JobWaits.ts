import { Effect, Result } from "effect"
import { decodeJobOrderRecord, decodeJobResponseText, fromStoredState, type JobResponse, normalizedName } from "@microdcs/job-state"
import { JobOrderDao, JobResponseDao } from "@microdcs/store"
import { eventually, type UntilDeadline } from "@microdcs/test-utils"

/** The job order's normalized state name, `"malformed"` for an undecodable record, `undefined` when it does not exist. */
export const jobOrderState = (id: string) =>
  Effect.flatMap(JobOrderDao, (dao) => dao.get(id)).pipe(
    Effect.map((doc) => {
      const decoded = decodeJobOrderRecord(doc.doc)
      return Result.isSuccess(decoded) ? normalizedName(decoded.success.state) : "malformed"
    }),
    Effect.catchTag("NotFound", () => Effect.succeed(undefined))
  )

/** Waits until the job order is in `state` (a normalized name such as `Ended_Completed`). */
export const untilJobOrderIs = (id: string, state: string, deadline?: UntilDeadline) =>
  eventually(jobOrderState(id).pipe(Effect.map((s) => (s === state ? s : undefined))), deadline)

/** The job response the SFC engine stores for a job (`{jobId}-response`) as stored, parsed and not decoded, or `undefined`. */
export const storedResponseOf = (jobId: string) =>
  Effect.flatMap(JobResponseDao, (dao) => dao.get(`${jobId}-response`)).pipe(
    Effect.map((doc) => JSON.parse(doc.doc) as Record<string, unknown>),
    Effect.catchTag("NotFound", () => Effect.succeed(undefined))
  )

/** The job response the SFC engine stores for a job (`{jobId}-response`), decoded as every reader decodes it, or `undefined`. */
export const responseOf = (jobId: string) =>
  Effect.flatMap(JobResponseDao, (dao) => dao.get(`${jobId}-response`)).pipe(
    Effect.flatMap((doc) => Effect.fromResult(decodeJobResponseText(doc.doc))),
    Effect.catchTag("NotFound", () => Effect.succeed(undefined))
  )

/** Waits for the job's response and returns it. */
export const untilResponse = (jobId: string, deadline?: UntilDeadline) => eventually(responseOf(jobId), deadline)

/** What a test usually checks of a job response: the final state's name, the result data by parameter id, the failure's text. */
export interface ResponseSummary {
  readonly state: string
  readonly data: Readonly<Record<string, unknown>>
  readonly error: string | undefined
}

export const responseSummary = (response: JobResponse): ResponseSummary => {
  const state = fromStoredState(response.JobState)
  return {
    state: Result.isSuccess(state) ? normalizedName(state.success) : "malformed",
    data: Object.fromEntries(response.JobResponseData.map((p) => [p.ID, p.Value])),
    error: response.Description?.Text
  }
}
