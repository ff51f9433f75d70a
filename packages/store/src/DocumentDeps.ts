import { Effect } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import type { WriteReply } from "@microdcs/lua-scripts"
import { parseDocumentHash, type StoredDocument } from "./Document.js"
import { keyProblem } from "./DocumentInput.js"
import type { DocumentDeleteInput, DocumentPutInput, DocumentSpec, DocumentWrite, StoredFields } from "./DocumentSpec.js"
import { type InvalidInput, NotFound } from "./Errors.js"
import { readForWrite } from "./IndexPrecondition.js"
import { cachedKey } from "./KeyCache.js"
import { typedCommand } from "./TypeGuard.js"
import type { ValkeyService } from "./Valkey.js"
import type { WriteReplyError } from "./WriteReplies.js"

// The implementation's view of a spec's inputs and failures; `makeDocumentDao`'s overloads give each spec its exact types.
export type AnyPut = DocumentPutInput
export type AnyDelete = DocumentDeleteInput
export type AnyFailure = WriteReplyError<WriteReply>
// biome-ignore lint/suspicious/noExplicitAny: the implementation serves every spec; the overloads of makeDocumentDao type the calls
export type AnySpec = DocumentSpec<AnyPut, string, any, WriteReply, AnyDelete, string, any, WriteReply, StoredDocument>

/** What a document DAO's functions share, built once per DAO. */
export interface DocumentDeps {
  readonly valkey: ValkeyService
  readonly spec: AnySpec
  readonly parse: (id: string, hash: Record<string, string>) => StoredDocument | undefined
  /** `nudge:changes`. */
  readonly nudgeChannel: string
  /** The `scopes` registry. */
  readonly scopes: string
  /** The change stream of a scope, built once per scope. */
  readonly changesKey: (scope: string) => string | KeyPartError
}

export const documentDeps = (valkey: ValkeyService, spec: AnySpec): DocumentDeps => ({
  valkey,
  spec,
  parse: spec.parse ?? parseDocumentHash,
  nudgeChannel: valkey.keys.key("nudge", { kind: "changes" }) as string,
  scopes: valkey.keys.key("scopes", {}) as string,
  changesKey: cachedKey((scope) => valkey.keys.key("changes", { scope }))
})

export const notFound = (deps: DocumentDeps, key: string, id: string) => new NotFound({ key, message: `${deps.spec.noun} ${id} does not exist` })

export const fail = (error: KeyPartError | InvalidInput) => Effect.fail(error instanceof KeyPartError ? keyProblem(error) : error)

/** The stored fields a write's keys depend on, after the test seam had its turn. */
export const readFields = (deps: DocumentDeps, key: string, attempt: number, fields: ReadonlyArray<string>, what: string) =>
  readForWrite(
    key,
    attempt,
    typedCommand(deps.valkey, `read ${deps.spec.kind} ${what}`, key, "hash", (c) => c.hmget(key, ...fields) as Promise<StoredFields>)
  )

export const documentWrite = (
  deps: DocumentDeps,
  key: string,
  changes: string,
  id: string,
  scope: string,
  op: string,
  expectedVersion: number,
  change: string
) => ({ key, changes, scopes: deps.scopes, args: { expectedVersion, scope, id, op, change, nudgeChannel: deps.nudgeChannel } }) satisfies DocumentWrite
