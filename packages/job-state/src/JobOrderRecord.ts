import { Data, Result } from "effect"
import { fromStoredState, type JobState, type StoredState, toStoredState } from "./JobState.js"
import { decodeOrigin, type Origin } from "./Origin.js"

/**
 * The job order document as the island stores it (`joborder:{id}` field `doc`): the MES's
 * `JobOrder` as it arrived, plus its current state in the stored OPC UA form. The publisher
 * publishes exactly this shape as `{JobOrder, State}`.
 */
export interface JobOrderRecord {
  readonly JobOrder: JobOrder
  readonly State: StoredState
  /** The comment of the last method that carried one. */
  readonly Comment?: string
  /** Who made the last change (a record written before origins has none). */
  readonly Origin?: Origin
}

/** The parts of an ISA-95 JobOrder the island reads; everything else is kept as it came. */
export interface JobOrder {
  readonly JobOrderID: string
  readonly Priority?: number
  readonly WorkMasterID?: ReadonlyArray<{ readonly ID: string }>
  readonly [field: string]: unknown
}

export class MalformedJobOrder extends Data.TaggedError("MalformedJobOrder")<{ readonly message: string }> {}

/** A decoded record: the job order, its typed state and the comment. */
export interface DecodedJobOrder {
  readonly jobOrder: JobOrder
  readonly state: JobState
  readonly comment?: string
  readonly origin?: Origin
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Checks the fields the island relies on; never throws. */
export const asJobOrder = (value: unknown): Result.Result<JobOrder, MalformedJobOrder> => {
  if (!isObject(value)) return Result.fail(new MalformedJobOrder({ message: "JobOrder must be an object" }))
  if (typeof value["JobOrderID"] !== "string" || value["JobOrderID"].length === 0) {
    return Result.fail(new MalformedJobOrder({ message: "JobOrder.JobOrderID must be a non-empty string" }))
  }
  const priority = value["Priority"]
  if (priority !== undefined && (typeof priority !== "number" || !Number.isFinite(priority))) {
    return Result.fail(new MalformedJobOrder({ message: "JobOrder.Priority must be a number" }))
  }
  const workMasters = value["WorkMasterID"]
  if (workMasters !== undefined && (!Array.isArray(workMasters) || !workMasters.every((w) => isObject(w) && typeof w["ID"] === "string"))) {
    return Result.fail(new MalformedJobOrder({ message: "JobOrder.WorkMasterID must be a list of {ID}" }))
  }
  return Result.succeed(value as JobOrder)
}

export const encodeJobOrderRecord = (jobOrder: JobOrder, state: JobState, comment?: string, origin?: Origin): string =>
  JSON.stringify({
    JobOrder: jobOrder,
    State: toStoredState(state),
    ...(comment !== undefined ? { Comment: comment } : {}),
    ...(origin !== undefined ? { Origin: origin } : {})
  })

export const decodeJobOrderRecord = (text: string): Result.Result<DecodedJobOrder, MalformedJobOrder> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return Result.fail(new MalformedJobOrder({ message: "the job order document is not JSON" }))
  }
  if (!isObject(parsed)) return Result.fail(new MalformedJobOrder({ message: "the job order document must be an object" }))
  // Plain code, not Result.gen: the engine decodes a job order on every direct send.
  const jobOrder = asJobOrder(parsed["JobOrder"])
  if (Result.isFailure(jobOrder)) return Result.fail(jobOrder.failure)
  const state = fromStoredState(parsed["State"])
  if (Result.isFailure(state)) return Result.fail(new MalformedJobOrder({ message: state.failure.message }))
  const comment = typeof parsed["Comment"] === "string" ? parsed["Comment"] : undefined
  // An origin that does not read as one is left out, not an error: the record stays usable.
  const origin = parsed["Origin"] === undefined ? undefined : decodeOrigin(parsed["Origin"])
  return Result.succeed({ jobOrder: jobOrder.success, state: state.success, ...(comment !== undefined ? { comment } : {}), ...(origin !== undefined ? { origin } : {}) })
}

/** OPC UA priority of a job order (a higher value wins); 0 when absent. */
export const priorityOf = (jobOrder: JobOrder): number => jobOrder.Priority ?? 0

/** The first work master a job order references: the one whose recipe runs it. */
export const firstWorkMasterId = (jobOrder: JobOrder): string | undefined => jobOrder.WorkMasterID?.[0]?.ID
