import { Effect } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import type { WriteReply } from "@microdcs/lua-scripts"
import { newOperationId, type Written } from "./Document.js"
import { type AnyDelete, type DocumentDeps, documentWrite, fail, notFound, readFields } from "./DocumentDeps.js"
import { expectedVersionProblem } from "./DocumentInput.js"
import type { StoredFields } from "./DocumentSpec.js"
import type { ConnectionError, InvalidInput, NotFound, StateMoved, WrongType } from "./Errors.js"
import { retryWhileMoved } from "./IndexPrecondition.js"
import { type SettleError, type Settled, settleWrite, type WriteReplyError } from "./WriteReplies.js"

type AttemptResult = Effect.Effect<Settled<WriteReply>, SettleError<WriteReply> | NotFound | InvalidInput | ConnectionError>

/** One attempt's script, from the stored scope and fields it read. */
const deleteWith = (
  deps: DocumentDeps,
  input: AnyDelete,
  key: string,
  op: string,
  expectedVersion: number,
  [scope, ...stored]: StoredFields
): AttemptResult => {
  if (scope === null || scope === undefined) return Effect.fail(notFound(deps, key, input.id))
  const changes = deps.changesKey(scope)
  if (changes instanceof KeyPartError) return fail(changes)
  const write = documentWrite(deps, key, changes, input.id, scope, op, expectedVersion, input.change ?? "delete")
  const call = deps.spec.delete.call(input, write, stored)
  if (call instanceof KeyPartError) return fail(call)
  return deps.valkey
    .script(deps.spec.delete.script, call.keys, call.args)
    .pipe(Effect.flatMap((reply) => settleWrite(reply, { key, expectedVersion, requestedScope: scope })))
}

type DeleteResult = Effect.Effect<Written, WriteReplyError<WriteReply> | NotFound | StateMoved | WrongType | InvalidInput | ConnectionError>
export const remove = (deps: DocumentDeps, input: AnyDelete): DeleteResult =>
  Effect.suspend((): DeleteResult => {
    const expectedVersion = input.expectedVersion ?? -1
    const problem = expectedVersionProblem(expectedVersion)
    if (problem) return Effect.fail(problem)
    const key = deps.spec.documentKey(input.id)
    if (key instanceof KeyPartError) return fail(key)
    const op = input.op ?? newOperationId()
    const extra = deps.spec.delete.read ?? []
    const fields = ["scope", ...extra]
    // The index keys depend on the stored scope (and fields): read, pass, let the script re-check.
    const attempt = (n: number) =>
      readFields(deps, key, n, fields, extra.length === 0 ? "scope" : "indexes").pipe(
        Effect.flatMap((read) => deleteWith(deps, input, key, op, expectedVersion, read))
      )
    return retryWhileMoved(key, attempt).pipe(Effect.map((version): Written => ({ version: version as number, op })))
  })
