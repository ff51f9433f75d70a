import { Effect, Result } from "effect"
import { type SfcCasManyJob, type SfcCasManyJobReply, type SfcCompareAndSetManyArgs, type SfcJobOrderMove, type SfcJobResponseCreate, sfcCompareAndSetMany } from "@microdcs/lua-scripts"
import { newOperationId } from "./Document.js"
import {
  type ConnectionError,
  DuplicateEvent,
  InvalidInput,
  type ScopeConflict,
  type UnknownOutcome,
  type VersionConflict,
  type WrongType
} from "./Errors.js"
import { writeOutcome, type WriteOutcome } from "./OutcomeCheck.js"
import { type CasDeps, EVENT_LIFETIME_MS, type PreparedJob, prepareJob, type SfcCompareAndSetMany, type SfcWritten } from "./SfcCasInput.js"
import { preparedMove } from "./SfcJobOrderMove.js"
import { preparedResponse } from "./SfcJobResponseCreate.js"
import { writeFailure } from "./WriteReplies.js"

/**
 * What one job of a `compareAndSetMany` can fail with, for that job alone: the errors of
 * `compareAndSet`, and, only when the call's reply was lost and the op check could not tell
 * whether this job's write landed (or its resend failed too), that `ConnectionError`.
 */
export type SfcCasManyError = VersionConflict | ScopeConflict | WrongType | DuplicateEvent | InvalidInput | ConnectionError

/** One job's result in a `compareAndSetMany`, in input order. */
export type SfcCasManyResult = Result.Result<SfcWritten, SfcCasManyError>

/** A job that goes to the script: where its result goes, its op, its input and its checked write (and move). */
interface SentJob {
  readonly slot: number
  readonly op: string
  readonly input: SfcCompareAndSetMany
  readonly prepared: PreparedJob
  readonly move: SfcJobOrderMove | undefined
  readonly response: SfcJobResponseCreate | undefined
}

type Checked = Pick<SentJob, "prepared" | "move" | "response">

/** The checked write of one input with its checked move and response, or the first problem. */
const prepareInput = (deps: CasDeps, input: SfcCompareAndSetMany, op: string): Checked | InvalidInput => {
  const { keys, maxDocumentBytes } = deps.valkey
  const prepared = eventsProblem(input.appliedEvents) ?? prepareJob(keys, deps.scopeKeys, input, input.appliedEvents ?? [], maxDocumentBytes, op)
  if (prepared instanceof InvalidInput) return prepared
  const move = input.jobOrderMove === undefined ? undefined : preparedMove(keys, input.jobId, input.jobOrderMove, maxDocumentBytes)
  if (move instanceof InvalidInput) return move
  const response = input.jobResponse === undefined ? undefined : preparedResponse(keys, input.jobResponse, maxDocumentBytes)
  return response instanceof InvalidInput ? response : { prepared, move, response }
}

type Slots = Array<SfcCasManyResult | undefined>

/** Why `appliedEvents` is refused before its keys are built, or `undefined`. */
const eventsProblem = (events: unknown): InvalidInput | undefined => {
  if (events === undefined) return undefined
  if (!Array.isArray(events)) return new InvalidInput({ field: "appliedEvents", message: "appliedEvents must be an array" })
  const at = events.findIndex((event) => typeof event !== "object" || event === null)
  if (at >= 0) return new InvalidInput({ field: `appliedEvents[${at}]`, message: `appliedEvents[${at}] must be { source, id }` })
  // One write applying an event twice would apply it twice: the script checks the records before it writes any.
  const keys = events.map((event: { readonly source?: unknown; readonly id?: unknown }) => JSON.stringify([event.source, event.id]))
  const again = keys.findIndex((key, i) => keys.indexOf(key) !== i)
  return again < 0 ? undefined : new InvalidInput({ field: `appliedEvents[${again}]`, message: `appliedEvents[${again}] names an event applied earlier in the same write` })
}

/** The job ids named more than once in the batch. */
const repeatedIds = (inputs: ReadonlyArray<SfcCompareAndSetMany>): ReadonlySet<string> => {
  const seen = new Set<string>()
  const twice = new Set<string>()
  for (const { jobId } of inputs) (seen.has(jobId) ? twice : seen).add(jobId)
  return twice
}

/** Checks every input as `compareAndSet` does: a refused one gets its result now (not sent), the others are returned to be sent. */
const prepareBatch = (deps: CasDeps, inputs: ReadonlyArray<SfcCompareAndSetMany>, slots: Slots): Array<SentJob> => {
  const twice = repeatedIds(inputs)
  const jobs: Array<SentJob> = []
  inputs.forEach((input, slot) => {
    if (twice.has(input.jobId)) {
      const message = `job ${input.jobId} is named more than once in one compareAndSetMany; none of its writes was sent`
      slots[slot] = Result.fail(new InvalidInput({ field: "jobId", message }))
      return
    }
    const op = input.op ?? newOperationId()
    const checked = prepareInput(deps, input, op)
    if (checked instanceof InvalidInput) slots[slot] = Result.fail(checked)
    else jobs.push({ slot, op, input, ...checked })
  })
  return jobs
}

const manyArgs = (deps: CasDeps, jobs: ReadonlyArray<SentJob>): SfcCompareAndSetManyArgs => ({
  nudgeChannel: deps.nudgeChannel,
  eventLifetimeMs: EVENT_LIFETIME_MS,
  jobs: jobs.map(
    ({ input, prepared, move, response }): SfcCasManyJob => ({
      ...prepared.args,
      keys: prepared.keys,
      events: prepared.eventKeys,
      nudge: input.nudge !== false,
      ...(move !== undefined ? { jobOrderMove: move } : {}),
      ...(response !== undefined ? { jobResponse: response } : {})
    })
  )
})

/** One job's result from its reply: the mapping `compareAndSet` applies, plus the duplicate's event index. */
const jobResult = (reply: SfcCasManyJobReply, job: SentJob): SfcCasManyResult => {
  const { keys, eventKeys } = job.prepared
  switch (reply.status) {
    case "ok":
      return Result.succeed({
        version: reply.version,
        op: job.op,
        entryIds: reply.entryIds,
        ...(reply.jobOrder !== undefined ? { jobOrder: reply.jobOrder } : {}),
        ...(reply.jobOrderVersion !== undefined ? { jobOrderVersion: reply.jobOrderVersion } : {}),
        ...(reply.responseVersion !== undefined ? { responseVersion: reply.responseVersion } : {})
      })
    case "duplicate":
      return Result.fail(new DuplicateEvent({ key: eventKeys[reply.eventIndex] ?? keys.state, jobId: reply.jobId, eventIndex: reply.eventIndex }))
    default:
      return Result.fail(writeFailure(reply, { key: keys.state, expectedVersion: job.input.expectedVersion, requestedScope: job.input.scope }))
  }
}

/** Sends `jobs` in one script call (one `WAIT` with `minReplicasAck`, as every script); each job's result, in order. */
const send = (deps: CasDeps, jobs: ReadonlyArray<SentJob>): Effect.Effect<ReadonlyArray<SfcCasManyResult>, ConnectionError> =>
  deps.valkey.script(sfcCompareAndSetMany, {}, manyArgs(deps, jobs)).pipe(
    Effect.flatMap((replies) =>
      replies.length === jobs.length
        ? Effect.succeed(replies.map((reply, j) => jobResult(reply, jobs[j]!)))
        : Effect.die(new Error(`sfc-cas-many replied for ${replies.length} jobs, ${jobs.length} were sent`))
    )
  )

const undetermined: WriteOutcome<number> = { _tag: "Undetermined" }

/** The op check of each job, as `compareAndSet` runs it for its one write (the checks go out together); a failed check cannot tell. */
const checkEach = (deps: CasDeps, jobs: ReadonlyArray<SentJob>, elapsedMs: number): Effect.Effect<ReadonlyArray<WriteOutcome<number>>> =>
  Effect.forEach(
    jobs,
    ({ prepared, op, input }) =>
      writeOutcome(deps.valkey, { key: prepared.keys.state, op, expectedVersion: input.expectedVersion, elapsedMs }).pipe(
        Effect.orElseSucceed(() => undetermined)
      ),
    { concurrency: "unbounded" }
  )

/**
 * A call whose reply was lost, resolved job by job as `compareAndSet` resolves its one write:
 * landed (its op is the state's last: `entryIds: null`), provably not landed (sent once more,
 * together, under the same ops), or undetermined (that job's `UnknownOutcome`). Only when no
 * job's outcome could be learnt does the whole call fail, with the error the single path gives.
 */
const resolveLost = (
  deps: CasDeps,
  jobs: ReadonlyArray<SentJob>,
  unknown: UnknownOutcome,
  elapsedMs: number
): Effect.Effect<ReadonlyArray<SfcCasManyResult>, ConnectionError> =>
  Effect.flatMap(checkEach(deps, jobs, elapsedMs), (outcomes) => {
    const results: Array<SfcCasManyResult> = []
    const again: Array<number> = []
    outcomes.forEach((outcome, j) => {
      if (outcome._tag === "NotLanded") again.push(j)
      results[j] = outcome._tag === "Landed" ? Result.succeed({ version: outcome.value, op: jobs[j]!.op, entryIds: null }) : Result.fail(unknown)
    })
    const anyLanded = outcomes.some((outcome) => outcome._tag === "Landed")
    if (again.length === 0) return anyLanded ? Effect.succeed(results) : Effect.fail(unknown)
    return send(
      deps,
      again.map((j) => jobs[j]!)
    ).pipe(
      Effect.map((resent) => resent.forEach((result, k) => void (results[again[k]!] = result))),
      Effect.catch((error: ConnectionError) =>
        anyLanded ? Effect.sync(() => again.forEach((j) => void (results[j] = Result.fail(error)))) : Effect.fail(error)
      ),
      Effect.as(results)
    )
  })

/**
 * Many jobs' compare-and-set in one script call (`sfc-cas-many`): each job checked and written
 * on its own, with the result a `compareAndSet` of it would have had, in input order. An input
 * refused by the checks, or whose job id is named twice, is `InvalidInput` and is not sent.
 */
export const compareAndSetMany = (
  deps: CasDeps,
  inputs: ReadonlyArray<SfcCompareAndSetMany>
): Effect.Effect<ReadonlyArray<SfcCasManyResult>, ConnectionError> =>
  Effect.suspend((): Effect.Effect<ReadonlyArray<SfcCasManyResult>, ConnectionError> => {
    const slots: Slots = new Array<SfcCasManyResult | undefined>(inputs.length)
    const jobs = prepareBatch(deps, inputs, slots)
    const filled = slots as Array<SfcCasManyResult>
    if (jobs.length === 0) return Effect.succeed(filled)
    const sentAt = performance.now()
    return send(deps, jobs).pipe(
      Effect.catchTag("UnknownOutcome", (unknown) => resolveLost(deps, jobs, unknown, performance.now() - sentAt)),
      Effect.map((results) => {
        results.forEach((result, j) => void (filled[jobs[j]!.slot] = result))
        return filled
      })
    )
  })
