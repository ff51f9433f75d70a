import { Result } from "effect"
import { jsonDocument, type SfcCasManyError, type SfcJobResponseInput, type SfcWritten } from "@microdcs/store"
import type { EngineOutput, JobOrderEntry, JobResponseEntry } from "@microdcs/sfc"
import { jobOrderOperation, responseDocument, responseOperation } from "./EntryOperations.js"
import type { ExecutionDeps } from "./ExecutionStates.js"
import type { PlannedMove } from "./JobOrderTransitions.js"

/**
 * What a write carries along in its own script call, beside its state: its first job order move
 * (Run with the start, Complete or Abort with the end), from the job order this process holds,
 * and its job response. Each is written only if it still applies (the job order at the version
 * held, the response not stored yet) and never refuses the state. One that landed is marked done,
 * so the carry-out and the entry's handler skip it; one that did not is theirs, as before.
 */
export interface CarriedAlong {
  readonly move: PlannedMove | undefined
  readonly response: { readonly op: string; readonly input: SfcJobResponseInput } | undefined
}

const nothing: CarriedAlong = { move: undefined, response: undefined }

const moveOf = (deps: ExecutionDeps, output: EngineOutput, expectedVersion: number): PlannedMove | undefined => {
  const entry = output.outbox.find((e): e is JobOrderEntry => e.type === "joborder")
  if (deps.jobOrders === undefined || entry === undefined || entry.jobId !== output.state.jobId) return undefined
  return deps.jobOrders.planMove(entry.jobId, entry.trigger, jobOrderOperation(entry.jobId, String(expectedVersion + 1), entry.trigger), entry.reason)
}

const responseOf = (deps: ExecutionDeps, output: EngineOutput): CarriedAlong["response"] => {
  const entry = output.outbox.find((e): e is JobResponseEntry => e.type === "jobresponse")
  // The response's actuals come from its job order: without a held copy, the entry's handler reads it and stores the response.
  const held = entry === undefined ? undefined : deps.jobOrders?.held(entry.jobId)
  if (entry === undefined || held === undefined) return undefined
  const op = responseOperation(entry.responseId)
  const { scope } = output.state
  const doc = jsonDocument(responseDocument(entry, held.jobOrder))
  return {
    op,
    input: { id: entry.responseId, scope, orderId: entry.jobId, state: entry.state, startTime: entry.startTime, endTime: entry.endTime, doc, op, change: "ResultUpdate" }
  }
}

/** Where the runtime runs (it holds job orders), a write's move and response; the admin tool's writes carry none. */
export const carriedAlong = (deps: ExecutionDeps, output: EngineOutput, expectedVersion: number): CarriedAlong => {
  if (deps.jobOrders === undefined || !output.outbox.some((e) => e.type !== "command")) return nothing
  return { move: moveOf(deps, output, expectedVersion), response: responseOf(deps, output) }
}

// A version of 0 (not written) or none (the reply was lost) is not a landing.
const landed = (version: number | undefined): number | undefined => (version !== undefined && version > 0 ? version : undefined)

/** What became of what the write carried: marked done when it landed; the job order cache told either way. */
export const settleCarried = (deps: ExecutionDeps, along: CarriedAlong, result: Result.Result<SfcWritten, SfcCasManyError>): void => {
  const written = Result.isSuccess(result) ? result.success : undefined
  if (along.move !== undefined) {
    const version = landed(written?.jobOrderVersion)
    if (version !== undefined) deps.dispatch.moved(along.move.op)
    deps.jobOrders?.settleMove(along.move, version)
  }
  if (along.response !== undefined && landed(written?.responseVersion) !== undefined) deps.dispatch.moved(along.response.op)
}

/**
 * The job order's version as the write's script found it (before the write's own move), from
 * what the reply already carries: the version its move was checked against when the move
 * landed, else the version its direct send's read gives (no move landed in between); `0` when
 * missing, `undefined` when the reply tells nothing (a start then reads the job order again).
 */
export const jobOrderSeen = (along: CarriedAlong, written: SfcWritten): number | undefined => {
  if (along.move !== undefined && landed(written.jobOrderVersion) !== undefined) return along.move.current.version
  if (written.jobOrder === undefined) return undefined
  return written.jobOrder === null ? 0 : written.jobOrder.version
}
