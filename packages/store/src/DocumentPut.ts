import { Effect } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import type { WriteReply } from "@microdcs/lua-scripts"
import { newOperationId, type Written } from "./Document.js"
import { type AnyFailure, type AnyPut, type DocumentDeps, documentWrite, fail, readFields } from "./DocumentDeps.js"
import { documentProblem, expectedVersionProblem, keyProblem } from "./DocumentInput.js"
import type { AttemptCall, ScriptCall, StoredFields } from "./DocumentSpec.js"
import { type ConnectionError, InvalidInput, type UnknownOutcome } from "./Errors.js"
import { retryWhileMoved } from "./IndexPrecondition.js"
import { writeOutcome } from "./OutcomeCheck.js"
import { type SettleError, type Settled, settleWrite, stateMoved, writeFailure, type WriteContext } from "./WriteReplies.js"

export type PutFailure = AnyFailure | InvalidInput | ConnectionError
export type PutResult = Effect.Effect<Written, PutFailure>

/** A put that passed its checks: its call (or the builder of each attempt's), context and op. */
export interface Prepared {
  readonly input: AnyPut
  readonly built: ScriptCall<string, unknown> | AttemptCall<string, unknown>
  readonly context: WriteContext
  readonly op: string
  readonly changes: string
}

/** The error of a failing reply of a write that read nothing: a `retry` is final there (as in `settleFinal`). */
export const finalFailure = (reply: Exclude<WriteReply, { readonly status: "ok" }>, context: WriteContext): AnyFailure =>
  (reply.status === "retry" ? stateMoved(context.key) : writeFailure(reply, context)) as AnyFailure

const isUnknownOutcome = (error: { readonly _tag: string }): error is UnknownOutcome => error._tag === "UnknownOutcome"

/** A put's checks and keys, plain synchronous code run before anything is sent: the write, or why it is refused. */
export const prepare = (deps: DocumentDeps, input: AnyPut): Prepared | InvalidInput => {
  const { spec } = deps
  const problem =
    expectedVersionProblem(input.expectedVersion) ?? spec.put.check?.(input) ?? documentProblem("doc", input.doc, deps.valkey.maxDocumentBytes)
  if (problem) return problem
  const key = spec.documentKey(input.id)
  if (key instanceof KeyPartError) return keyProblem(key)
  const changes = deps.changesKey(input.scope)
  if (changes instanceof KeyPartError) return keyProblem(changes)
  const op = input.op ?? newOperationId()
  const { expectedVersion } = input
  const built = spec.put.call(input, documentWrite(deps, key, changes, input.id, input.scope, op, expectedVersion, input.change ?? "put"))
  if (built instanceof KeyPartError) return keyProblem(built)
  return { input, built, context: { key, expectedVersion, requestedScope: input.scope }, op, changes }
}

/**
 * A put whose reply was lost (`UnknownOutcome`, `elapsedMs` after it was sent): its op check
 * says whether it landed (its result stands), provably did not (`resend`), or cannot tell
 * (the `UnknownOutcome` is what the caller sees), as `resolveUnknownOutcome` does.
 */
export const inDoubt = (deps: DocumentDeps, item: Prepared, unknown: UnknownOutcome, elapsedMs: number, resend: PutResult): PutResult => {
  const { key, expectedVersion } = item.context
  const record = { changes: item.changes, kind: deps.spec.kind, id: item.input.id }
  return writeOutcome(deps.valkey, { key, op: item.op, expectedVersion, record, elapsedMs }).pipe(
    Effect.mapError(() => unknown),
    Effect.flatMap((outcome): PutResult => {
      switch (outcome._tag) {
        case "Landed":
          return Effect.succeed({ version: outcome.value, op: item.op })
        case "NotLanded":
          return resend
        case "Undetermined":
          return Effect.fail(unknown)
      }
    })
  )
}

/** The script of a put that read nothing: nothing can have moved, so a `retry` is final. */
const sendUnread = (deps: DocumentDeps, call: ScriptCall<string, unknown>, { context, op }: Prepared): PutResult =>
  deps.valkey
    .script(deps.spec.put.script, call.keys, call.args)
    .pipe(Effect.flatMap((reply) => (reply.status === "ok" ? Effect.succeed({ version: reply.version, op }) : Effect.fail(finalFailure(reply, context)))))

/** The reads and scripts of a put whose keys depend on stored `fields`, re-read while the script says they moved. */
const sendAfterRead = (deps: DocumentDeps, { input, built, context, op }: Prepared, fields: ReadonlyArray<string>): PutResult => {
  // A create-only put's first attempt needs no read: a document that does not exist has
  // none of the fields (one that does makes the script answer conflict, or moved: re-read).
  const absent: StoredFields = fields.map(() => null)
  const attempt = (n: number) =>
    (n === 1 && input.expectedVersion === 0 ? Effect.succeed(absent) : readFields(deps, context.key, n, fields, "indexes")).pipe(
      Effect.flatMap((stored): Effect.Effect<Settled<WriteReply>, SettleError<WriteReply> | InvalidInput | ConnectionError> => {
        const call = typeof built === "function" ? built(stored) : built
        if (call instanceof KeyPartError) return fail(call)
        return deps.valkey.script(deps.spec.put.script, call.keys, call.args).pipe(Effect.flatMap((reply) => settleWrite(reply, context)))
      })
    )
  return retryWhileMoved(context.key, attempt).pipe(Effect.map((version): Written => ({ version: version as number, op })))
}

export const put = (deps: DocumentDeps, input: AnyPut): PutResult =>
  // The hot path of every island: checks and keys are plain synchronous code, so a put without
  // a read is this step, the script call and one step mapping its reply to the result.
  Effect.suspend((): PutResult => {
    const prepared = prepare(deps, input)
    if (prepared instanceof InvalidInput) return Effect.fail(prepared)
    const fields = deps.spec.put.read
    let write: PutResult
    if (fields === undefined) {
      const { built } = prepared
      const call = typeof built === "function" ? built([]) : built
      if (call instanceof KeyPartError) return fail(call)
      write = sendUnread(deps, call, prepared)
    } else write = sendAfterRead(deps, prepared, fields)
    const sentAt = performance.now()
    return write.pipe(Effect.catchIf(isUnknownOutcome, (unknown) => inDoubt(deps, prepared, unknown, performance.now() - sentAt, write)))
  })
