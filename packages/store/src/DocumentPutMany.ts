import { Effect, Result } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import type { WriteReply } from "@microdcs/lua-scripts"
import type { Written } from "./Document.js"
import type { AnyFailure, AnyPut, DocumentDeps } from "./DocumentDeps.js"
import { keyProblem } from "./DocumentInput.js"
import { finalFailure, inDoubt, type Prepared, prepare, put, type PutFailure, type PutResult } from "./DocumentPut.js"
import type { ScriptCall } from "./DocumentSpec.js"
import { type ConnectionError, InvalidInput } from "./Errors.js"
import type { ScriptResult } from "./ScriptMany.js"
import type { WriteContext } from "./WriteReplies.js"

/**
 * What became of one item of a `putMany`: `Right` with the new version and op, or `Left` with
 * the error a `put` of that item alone would have failed with. A refused item (`InvalidInput`)
 * was not sent; a conflicting one wrote nothing.
 */
export type PutOutcome<E> = Result.Result<Written, E>

type Outcomes = Array<PutOutcome<PutFailure> | undefined>
type ManyPutResult = Effect.Effect<ReadonlyArray<PutOutcome<PutFailure>>, InvalidInput>

/** `settleFinal` as a plain value, for a batch that maps many replies in one step. */
const settledFinal = (reply: WriteReply, context: WriteContext): Result.Result<number, AnyFailure> =>
  reply.status === "ok" ? Result.succeed(reply.version) : Result.fail(finalFailure(reply, context))

/** A batched item whose call failed: resent alone when it was never sent, else its op decides. */
const settleFailed = (deps: DocumentDeps, item: Prepared, error: ConnectionError, elapsedMs: number): PutResult => {
  // Never sent: `put` sends it again, with its own retries, under the same op.
  if (error._tag !== "UnknownOutcome") return error._tag === "StoreUnavailable" ? put(deps, { ...item.input, op: item.op }) : Effect.fail(error)
  return inDoubt(deps, item, error, elapsedMs, put(deps, { ...item.input, op: item.op }))
}

/** Checks every input as `put` does: a refused one gets its outcome now, the others join the batch (`slots` says where each came from). */
const prepareBatch = (
  deps: DocumentDeps,
  inputs: ReadonlyArray<AnyPut>,
  outcomes: Outcomes,
  batch: Array<Prepared>,
  slots: Array<number>,
  calls: Array<ScriptCall<string, unknown>>
): void =>
  inputs.forEach((input, i) => {
    const prepared = prepare(deps, input)
    const call = prepared instanceof InvalidInput ? prepared : typeof prepared.built === "function" ? prepared.built([]) : prepared.built
    if (call instanceof KeyPartError) outcomes[i] = Result.fail(keyProblem(call))
    else if (call instanceof InvalidInput) outcomes[i] = Result.fail(call)
    else {
      outcomes[i] = undefined
      slots.push(i)
      batch.push(prepared as Prepared)
      calls.push(call)
    }
  })

/** Each batched item's outcome from its reply; the calls that failed are settled one by one. */
const settleBatch = (
  deps: DocumentDeps,
  results: ReadonlyArray<ScriptResult<WriteReply>>,
  outcomes: Outcomes,
  batch: ReadonlyArray<Prepared>,
  slots: ReadonlyArray<number>,
  sentAt: number
): ManyPutResult => {
  const failed: Array<number> = []
  results.forEach((result, j) => {
    const item = batch[j]!
    if (result._tag === "Failed") {
      failed.push(j)
      return
    }
    // Nothing was read, so nothing can have moved: a `retry` is final (as in `put`).
    outcomes[slots[j]!] = Result.map(settledFinal(result.reply, item.context), (version): Written => ({ version, op: item.op }))
  })
  if (failed.length === 0) return Effect.succeed(outcomes as ReadonlyArray<PutOutcome<PutFailure>>)
  const elapsedMs = performance.now() - sentAt
  return Effect.forEach(
    failed,
    (j) => {
      const result = results[j]!
      if (result._tag !== "Failed") return Effect.void
      return Effect.result(settleFailed(deps, batch[j]!, result.error, elapsedMs)).pipe(Effect.map((outcome) => void (outcomes[slots[j]!] = outcome)))
    },
    { concurrency: "unbounded", discard: true }
  ).pipe(Effect.as(outcomes as ReadonlyArray<PutOutcome<PutFailure>>))
}

export const putMany = (deps: DocumentDeps, inputs: ReadonlyArray<AnyPut>): ManyPutResult =>
  Effect.suspend((): ManyPutResult => {
    if (!Array.isArray(inputs)) return Effect.fail(new InvalidInput({ field: "inputs", message: "inputs must be an array" }))
    if (inputs.length === 0) return Effect.succeed([])
    // A put that reads stored fields first has a read-recheck loop of its own per item.
    if (deps.spec.put.read !== undefined) return Effect.forEach(inputs, (input) => Effect.result(put(deps, input)), { concurrency: "unbounded" })
    const outcomes: Outcomes = []
    const batch: Array<Prepared> = []
    const slots: Array<number> = []
    const calls: Array<ScriptCall<string, unknown>> = []
    prepareBatch(deps, inputs, outcomes, batch, slots, calls)
    if (batch.length === 0) return Effect.succeed(outcomes as ReadonlyArray<PutOutcome<PutFailure>>)
    const sentAt = performance.now()
    return deps.valkey.scriptMany(deps.spec.put.script, calls).pipe(Effect.flatMap((results) => settleBatch(deps, results, outcomes, batch, slots, sentAt)))
  })
