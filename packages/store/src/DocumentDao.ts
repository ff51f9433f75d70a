import { Effect, Either, type Option } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import type { WriteReply } from "@microdcs/lua-scripts"
import { newOperationId, parseDocumentHash, type StoredDocument, type Written } from "./Document.js"
import { documentProblem, expectedVersionProblem, keyProblem, numberProblem } from "./DocumentInput.js"
import type {
  AttemptCall,
  DocumentDeleteInput,
  DocumentPage,
  DocumentPutInput,
  DocumentSpec,
  DocumentWrite,
  ListSpec,
  PageRequest,
  ScriptCall,
  StoredFields
} from "./DocumentSpec.js"
import { type ConnectionError, InvalidInput, NotFound, type StateMoved, type UnknownOutcome, type WrongType } from "./Errors.js"
import { readForWrite, retryWhileMoved } from "./IndexPrecondition.js"
import { cachedKey } from "./KeyCache.js"
import { operationLanded, writeOutcome } from "./OutcomeCheck.js"
import { typedCommand, typedPipeline } from "./TypeGuard.js"
import type { ValkeyService } from "./Valkey.js"
import { type SettleError, type Settled, settleWrite, stateMoved, writeFailure, type WriteContext, type WriteReplyError } from "./WriteReplies.js"

/** The paged list of a scope, highest or lowest first as its index orders it. */
export type PagedList<Item> = (
  scope: string,
  page?: PageRequest
) => Effect.Effect<DocumentPage<Item>, WrongType | InvalidInput | ConnectionError>

/** The methods every document DAO has; a type's own DAO adds its lookups (`byOrder`, ...). */
export interface DocumentDao<Put, Delete, Stored, PutError, DeleteError> {
  readonly put: (input: Put) => Effect.Effect<Written, PutError | InvalidInput | ConnectionError>
  /**
   * Many puts in one batch (see {@link PutOutcome}): each item is checked as `put` checks it,
   * and the valid ones are sent together. Each item succeeds or fails on its own, never all
   * or nothing; the outcomes come back in the order of `inputs`.
   */
  readonly putMany: (inputs: ReadonlyArray<Put>) => Effect.Effect<ReadonlyArray<PutOutcome<PutError | InvalidInput | ConnectionError>>, InvalidInput>
  readonly get: (id: string) => Effect.Effect<Stored, NotFound | WrongType | InvalidInput | ConnectionError>
  /** The documents of `ids` in one round trip, in order; missing ones are skipped. */
  readonly getMany: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Stored>, WrongType | InvalidInput | ConnectionError>
  readonly delete: (
    input: Delete
  ) => Effect.Effect<Written, DeleteError | NotFound | StateMoved | WrongType | InvalidInput | ConnectionError>
  /** The unknown-outcome check: `Some(version)` when the write `op` of `id` landed (see {@link operationLanded}). */
  readonly outcome: (id: string, op: string) => Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError>
}

/**
 * What became of one item of a `putMany`: `Right` with the new version and op, or `Left` with
 * the error a `put` of that item alone would have failed with. A refused item (`InvalidInput`)
 * was not sent; a conflicting one wrote nothing.
 */
export type PutOutcome<E> = Either.Either<Written, E>

/** A {@link DocumentDao} whose spec has a list: the scope's paged list too. */
export interface ListedDocumentDao<Put, Delete, Stored, PutError, DeleteError, Item>
  extends DocumentDao<Put, Delete, Stored, PutError, DeleteError> {
  readonly list: PagedList<Item>
}

const DEFAULT_PAGE = 100

/** The error of a failing reply of a write that read nothing: a `retry` is final there (as in `settleFinal`). */
const finalFailure = (reply: Exclude<WriteReply, { readonly status: "ok" }>, context: WriteContext): AnyFailure =>
  (reply.status === "retry" ? stateMoved(context.key) : writeFailure(reply, context)) as AnyFailure

/** `settleFinal` as a plain value, for a batch that maps many replies in one step. */
const settledFinal = (reply: WriteReply, context: WriteContext): Either.Either<number, AnyFailure> =>
  reply.status === "ok" ? Either.right(reply.version) : Either.left(finalFailure(reply, context))

const isUnknownOutcome = (error: { readonly _tag: string }): error is UnknownOutcome => error._tag === "UnknownOutcome"

// The implementation's view of a spec's inputs and failures.
type AnyPut = DocumentPutInput
type AnyDelete = DocumentDeleteInput
type AnyPutReply = WriteReply
type AnyDeleteReply = WriteReply
type AnyStored = StoredDocument
type AnyFailure = WriteReplyError<WriteReply>

/**
 * The document DAO of one type from its spec (see {@link DocumentSpec}): put, get, getMany,
 * delete, outcome and, with a list spec, a paged list. A put checks its input synchronously,
 * builds its keys, then sends one script (or, with `read`, reads the fields its keys depend on
 * first and re-reads while the script says they moved); an `UnknownOutcome` is resolved with
 * the op check. A delete reads the stored scope, and the fields of its `read`, the same way.
 */
export function makeDocumentDao<
  Put extends DocumentPutInput,
  PK extends string,
  PA,
  PR extends WriteReply,
  Delete extends DocumentDeleteInput,
  DK extends string,
  DA,
  DR extends WriteReply,
  Item,
  Stored extends StoredDocument = StoredDocument
>(
  valkey: ValkeyService,
  spec: DocumentSpec<Put, PK, PA, PR, Delete, DK, DA, DR, Stored> & { readonly list: ListSpec<Item> }
): ListedDocumentDao<Put, Delete, Stored, WriteReplyError<PR>, WriteReplyError<DR>, Item>
export function makeDocumentDao<
  Put extends DocumentPutInput,
  PK extends string,
  PA,
  PR extends WriteReply,
  Delete extends DocumentDeleteInput,
  DK extends string,
  DA,
  DR extends WriteReply,
  Stored extends StoredDocument = StoredDocument
>(
  valkey: ValkeyService,
  spec: DocumentSpec<Put, PK, PA, PR, Delete, DK, DA, DR, Stored>
): DocumentDao<Put, Delete, Stored, WriteReplyError<PR>, WriteReplyError<DR>>
// The implementation works on the widest types; the overloads above give each spec its exact ones.
export function makeDocumentDao(
  valkey: ValkeyService,
  // biome-ignore lint/suspicious/noExplicitAny: the implementation serves every spec; the overloads above type the calls
  spec: DocumentSpec<AnyPut, string, any, WriteReply, AnyDelete, string, any, WriteReply, StoredDocument>
): DocumentDao<AnyPut, AnyDelete, StoredDocument, AnyFailure, AnyFailure> & { readonly list?: PagedList<unknown> } {
  const nudgeChannel = valkey.keys.key("nudge", { kind: "changes" }) as string
  const scopes = valkey.keys.key("scopes", {}) as string
  const changesKey = cachedKey((scope) => valkey.keys.key("changes", { scope }))
  const parse = spec.parse ?? parseDocumentHash
  const { kind, noun } = spec
  const notFound = (key: string, id: string) => new NotFound({ key, message: `${noun} ${id} does not exist` })
  const fail = (error: KeyPartError | InvalidInput) => Effect.fail(error instanceof KeyPartError ? keyProblem(error) : error)

  /** The stored fields a write's keys depend on, after the test seam had its turn. */
  const readFields = (key: string, attempt: number, fields: ReadonlyArray<string>, what: string) =>
    readForWrite(
      key,
      attempt,
      typedCommand(valkey, `read ${kind} ${what}`, key, "hash", (c) => c.hmget(key, ...fields) as Promise<StoredFields>)
    )

  const documentWrite = (key: string, changes: string, id: string, scope: string, op: string, expectedVersion: number, change: string) =>
    ({ key, changes, scopes, args: { expectedVersion, scope, id, op, change, nudgeChannel } }) satisfies DocumentWrite

  type PutFailure = WriteReplyError<AnyPutReply> | InvalidInput | ConnectionError
  type PutResult = Effect.Effect<Written, PutFailure>
  type Prepared = {
    readonly input: AnyPut
    readonly built: ScriptCall<string, unknown> | AttemptCall<string, unknown>
    readonly context: WriteContext
    readonly op: string
    readonly changes: string
  }

  /** A put's checks and keys, plain synchronous code run before anything is sent: the write, or why it is refused. */
  const prepare = (input: AnyPut): Prepared | InvalidInput => {
    const problem =
      expectedVersionProblem(input.expectedVersion) ?? spec.put.check?.(input) ?? documentProblem("doc", input.doc, valkey.maxDocumentBytes)
    if (problem) return problem
    const key = spec.documentKey(input.id)
    if (key instanceof KeyPartError) return keyProblem(key)
    const changes = changesKey(input.scope)
    if (changes instanceof KeyPartError) return keyProblem(changes)
    const op = input.op ?? newOperationId()
    const { expectedVersion } = input
    const built = spec.put.call(input, documentWrite(key, changes, input.id, input.scope, op, expectedVersion, input.change ?? "put"))
    if (built instanceof KeyPartError) return keyProblem(built)
    return { input, built, context: { key, expectedVersion, requestedScope: input.scope }, op, changes }
  }

  /**
   * A put whose reply was lost (`UnknownOutcome`, `elapsedMs` after it was sent): its op check
   * says whether it landed (its result stands), provably did not (`resend`), or cannot tell
   * (the `UnknownOutcome` is what the caller sees), as `resolveUnknownOutcome` does.
   */
  const inDoubt = (item: Prepared, unknown: UnknownOutcome, elapsedMs: number, resend: PutResult): PutResult => {
    const { key, expectedVersion } = item.context
    const record = { changes: item.changes, kind, id: item.input.id }
    return writeOutcome(valkey, { key, op: item.op, expectedVersion, record, elapsedMs }).pipe(
      Effect.orElseFail(() => unknown),
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

  const put = (input: AnyPut): PutResult =>
    // The hot path of every island: checks and keys are plain synchronous code, so a put without
    // a read is this step, the script call and one step mapping its reply to the result.
    Effect.suspend((): PutResult => {
      const prepared = prepare(input)
      if (prepared instanceof InvalidInput) return Effect.fail(prepared)
      const { built, context, op } = prepared
      const fields = spec.put.read
      let write: PutResult
      if (fields === undefined) {
        // Nothing was read, so nothing can have moved: a `retry` is final.
        const call = typeof built === "function" ? built([]) : built
        if (call instanceof KeyPartError) return fail(call)
        write = valkey
          .script(spec.put.script, call.keys, call.args)
          .pipe(Effect.flatMap((reply) => (reply.status === "ok" ? Effect.succeed({ version: reply.version, op }) : Effect.fail(finalFailure(reply, context)))))
      } else {
        // A create-only put's first attempt needs no read: a document that does not exist has
        // none of the fields (one that does makes the script answer conflict, or moved: re-read).
        const absent: StoredFields = fields.map(() => null)
        const attempt = (n: number) =>
          (n === 1 && input.expectedVersion === 0 ? Effect.succeed(absent) : readFields(context.key, n, fields, "indexes")).pipe(
            Effect.flatMap((stored): Effect.Effect<Settled<AnyPutReply>, SettleError<AnyPutReply> | InvalidInput | ConnectionError> => {
              const call = typeof built === "function" ? built(stored) : built
              if (call instanceof KeyPartError) return fail(call)
              return valkey.script(spec.put.script, call.keys, call.args).pipe(Effect.flatMap((reply) => settleWrite(reply, context)))
            })
          )
        write = retryWhileMoved(context.key, attempt).pipe(Effect.map((version): Written => ({ version: version as number, op })))
      }
      const sentAt = performance.now()
      return write.pipe(Effect.catchIf(isUnknownOutcome, (unknown) => inDoubt(prepared, unknown, performance.now() - sentAt, write)))
    })

  /** A batched item whose call failed: resent alone when it was never sent, else its op decides. */
  const settleFailed = (item: Prepared, error: ConnectionError, elapsedMs: number): PutResult => {
    // Never sent: `put` sends it again, with its own retries, under the same op.
    if (error._tag !== "UnknownOutcome") return error._tag === "StoreUnavailable" ? put({ ...item.input, op: item.op }) : Effect.fail(error)
    return inDoubt(item, error, elapsedMs, put({ ...item.input, op: item.op }))
  }

  type ManyPutResult = Effect.Effect<ReadonlyArray<PutOutcome<PutFailure>>, InvalidInput>
  const putMany = (inputs: ReadonlyArray<AnyPut>): ManyPutResult =>
    Effect.suspend((): ManyPutResult => {
      if (!Array.isArray(inputs)) return Effect.fail(new InvalidInput({ field: "inputs", message: "inputs must be an array" }))
      if (inputs.length === 0) return Effect.succeed([])
      // A put that reads stored fields first has a read-recheck loop of its own per item.
      if (spec.put.read !== undefined) return Effect.forEach(inputs, (input) => Effect.either(put(input)), { concurrency: "unbounded" })
      const outcomes: Array<PutOutcome<PutFailure> | undefined> = []
      const batch: Array<Prepared> = []
      const slots: Array<number> = []
      const calls: Array<ScriptCall<string, unknown>> = []
      inputs.forEach((input, i) => {
        const prepared = prepare(input)
        const call = prepared instanceof InvalidInput ? prepared : typeof prepared.built === "function" ? prepared.built([]) : prepared.built
        if (call instanceof KeyPartError) outcomes[i] = Either.left(keyProblem(call))
        else if (call instanceof InvalidInput) outcomes[i] = Either.left(call)
        else {
          outcomes[i] = undefined
          slots.push(i)
          batch.push(prepared as Prepared)
          calls.push(call)
        }
      })
      if (batch.length === 0) return Effect.succeed(outcomes as ReadonlyArray<PutOutcome<PutFailure>>)
      const sentAt = performance.now()
      return valkey.scriptMany(spec.put.script, calls).pipe(
        Effect.flatMap((results) => {
          const failed: Array<number> = []
          results.forEach((result, j) => {
            const item = batch[j]!
            if (result._tag === "Failed") {
              failed.push(j)
              return
            }
            // Nothing was read, so nothing can have moved: a `retry` is final (as in `put`).
            outcomes[slots[j]!] = Either.map(settledFinal(result.reply, item.context), (version): Written => ({ version, op: item.op }))
          })
          if (failed.length === 0) return Effect.succeed(outcomes as ReadonlyArray<PutOutcome<PutFailure>>)
          const elapsedMs = performance.now() - sentAt
          return Effect.forEach(
            failed,
            (j) => {
              const result = results[j]!
              if (result._tag !== "Failed") return Effect.void
              return Effect.either(settleFailed(batch[j]!, result.error, elapsedMs)).pipe(Effect.map((outcome) => void (outcomes[slots[j]!] = outcome)))
            },
            { concurrency: "unbounded", discard: true }
          ).pipe(Effect.as(outcomes as ReadonlyArray<PutOutcome<PutFailure>>))
        })
      )
    })

  type GetResult = Effect.Effect<AnyStored, NotFound | WrongType | InvalidInput | ConnectionError>
  const get = (id: string): GetResult =>
    Effect.suspend((): GetResult => {
      const key = spec.documentKey(id)
      if (key instanceof KeyPartError) return fail(key)
      return typedCommand(valkey, `get ${kind}`, key, "hash", (c) => c.hgetall(key)).pipe(
        Effect.flatMap((hash) => {
          const found = parse(id, hash)
          return found === undefined ? Effect.fail(notFound(key, id)) : Effect.succeed(found)
        })
      )
    })

  type ManyResult = Effect.Effect<ReadonlyArray<AnyStored>, WrongType | InvalidInput | ConnectionError>
  const getMany = (ids: ReadonlyArray<string>): ManyResult =>
    Effect.suspend((): ManyResult => {
      if (!Array.isArray(ids)) return Effect.fail(new InvalidInput({ field: "ids", message: "ids must be an array" }))
      if (ids.length === 0) return Effect.succeed([])
      const keys: Array<string> = []
      for (const id of ids) {
        const key = spec.documentKey(id)
        if (key instanceof KeyPartError) return fail(key)
        keys.push(key)
      }
      // One id needs no pipeline object: a plain HGETALL, and a missing one builds no error.
      if (keys.length === 1) {
        const [key] = keys as [string]
        return typedCommand(valkey, `get ${kind}s`, key, "hash", (c) => c.hgetall(key)).pipe(
          Effect.map((hash) => {
            const found = parse(ids[0]!, hash)
            return found === undefined ? [] : [found]
          })
        )
      }
      return typedPipeline<Record<string, string>>(valkey, `get ${kind}s`, keys, "hash", (p, key) => p.hgetall(key)).pipe(
        Effect.map((hashes) => ids.flatMap((id, i) => parse(id, hashes[i] ?? {}) ?? []))
      )
    })

  type DeleteResult = Effect.Effect<Written, WriteReplyError<AnyDeleteReply> | NotFound | StateMoved | WrongType | InvalidInput | ConnectionError>
  const remove = (input: AnyDelete): DeleteResult =>
    Effect.suspend((): DeleteResult => {
      const expectedVersion = input.expectedVersion ?? -1
      const problem = expectedVersionProblem(expectedVersion)
      if (problem) return Effect.fail(problem)
      const key = spec.documentKey(input.id)
      if (key instanceof KeyPartError) return fail(key)
      const op = input.op ?? newOperationId()
      const extra = spec.delete.read ?? []
      const fields = ["scope", ...extra]
      // The index keys depend on the stored scope (and fields): read, pass, let the script re-check.
      const attempt = (n: number) =>
        readFields(key, n, fields, extra.length === 0 ? "scope" : "indexes").pipe(
          Effect.flatMap(([scope, ...stored]): Effect.Effect<Settled<AnyDeleteReply>, SettleError<AnyDeleteReply> | NotFound | InvalidInput | ConnectionError> => {
            if (scope === null || scope === undefined) return Effect.fail(notFound(key, input.id))
            const changes = changesKey(scope)
            if (changes instanceof KeyPartError) return fail(changes)
            const write = documentWrite(key, changes, input.id, scope, op, expectedVersion, input.change ?? "delete")
            const call = spec.delete.call(input, write, stored)
            if (call instanceof KeyPartError) return fail(call)
            return valkey
              .script(spec.delete.script, call.keys, call.args)
              .pipe(Effect.flatMap((reply) => settleWrite(reply, { key, expectedVersion, requestedScope: scope })))
          })
        )
      return retryWhileMoved(key, attempt).pipe(Effect.map((version): Written => ({ version: version as number, op })))
    })

  type OutcomeResult = Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError>
  const outcome = (id: string, op: string): OutcomeResult =>
    Effect.suspend((): OutcomeResult => {
      const key = spec.documentKey(id)
      return key instanceof KeyPartError ? fail(key) : operationLanded(valkey, key, op, { kind, id })
    })

  const dao = { put, putMany, get, getMany, delete: remove, outcome }
  return spec.list === undefined ? dao : { ...dao, list: pagedList(spec.list) }
}

/** A page beyond this offset or count is no page any index holds, and Valkey refuses the range. */
const MAX_PAGE_NUMBER = Number.MAX_SAFE_INTEGER - 1

/** Why a page bound is refused, or `undefined`. */
const pageProblem = (field: string, value: number): InvalidInput | undefined =>
  numberProblem(field, value) ??
  (value > MAX_PAGE_NUMBER ? new InvalidInput({ field, message: `${field} must be at most ${MAX_PAGE_NUMBER}` }) : undefined)

/** `count` items of the index from `offset`, reading one more to tell whether a next page exists. */
const pagedList =
  <Item>(spec: ListSpec<Item>): PagedList<Item> =>
  (scope, page = {}) =>
    Effect.suspend((): ReturnType<PagedList<Item>> => {
      const key = spec.key(scope)
      if (key instanceof KeyPartError) return Effect.fail(keyProblem(key))
      const problem = pageProblem("offset", page.offset ?? 0) ?? pageProblem("count", page.count ?? DEFAULT_PAGE)
      if (problem) return Effect.fail(problem)
      const offset = Math.max(0, Math.floor(page.offset ?? 0))
      const count = Math.max(1, Math.floor(page.count ?? DEFAULT_PAGE))
      return spec.read(key, offset, count + 1).pipe(
        Effect.map((items): DocumentPage<Item> => {
          const more = items.length > count
          return { items: more ? items.slice(0, count) : items, next: more ? offset + count : null }
        })
      )
    })
