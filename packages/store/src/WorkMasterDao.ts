import { Effect, Option } from "effect"
import { deleteWorkMaster, putWorkMaster } from "@microdcs/lua-scripts"
import {
  type ConnectionError,
  type InvalidInput,
  NotFound,
  type ScopeConflict,
  type StateMoved,
  type VersionConflict,
  type WrongType
} from "./Errors.js"
import {
  type ExpectedVersion,
  newOperationId,
  operationLanded,
  parseDocumentHash,
  resolveUnknownOutcome,
  writeOutcome,
  type StoredDocument,
  validateDocument,
  validateExpectedVersion,
  writeResult,
  type Written
} from "./Document.js"
import { moved, readForWrite, retryWhileMoved } from "./IndexPrecondition.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"

export interface PutWorkMaster {
  readonly id: string
  readonly scope: string
  /** The work master as JSON text. */
  readonly doc: string
  readonly expectedVersion: ExpectedVersion
  /** The method that caused the write; default `put`. */
  readonly change?: string | undefined
  /** Operation id stored with the write; default a new UUID. Pass your own to make retries idempotent. */
  readonly op?: string | undefined
}

export interface DeleteWorkMaster {
  readonly id: string
  readonly expectedVersion?: ExpectedVersion | undefined
  readonly op?: string | undefined
  readonly change?: string | undefined
}

/** Work master documents: `workmaster:{id}` plus the per-scope id set (data-layer.md §5, R-19). */
export class WorkMasterDao extends Effect.Service<WorkMasterDao>()("@microdcs/store/WorkMasterDao", {
  effect: Effect.gen(function* () {
    const valkey = yield* Valkey
    const nudgeChannel = valkey.keys.key("nudge", { kind: "changes" }) as string
    const scopesKey = valkey.keys.key("scopes", {}) as string

    const put = (
      input: PutWorkMaster
    ): Effect.Effect<Written, VersionConflict | ScopeConflict | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        yield* validateExpectedVersion(input.expectedVersion)
        yield* validateDocument("doc", input.doc, valkey.maxDocumentBytes)
        const doc = yield* valkey.key("workMaster", { id: input.id })
        const list = yield* valkey.key("workMasterList", { scope: input.scope })
        const changes = yield* valkey.key("changes", { scope: input.scope })
        const op = input.op ?? newOperationId()
        const write = valkey
          .script(putWorkMaster, { doc, list, scopes: scopesKey, changes }, {
            expectedVersion: input.expectedVersion,
            scope: input.scope,
            id: input.id,
            doc: input.doc,
            op,
            change: input.change ?? "put",
            nudgeChannel
          })
          .pipe(Effect.flatMap((reply) => writeResult(doc, input.expectedVersion, input.scope, reply)))
        const record = { changes, kind: "workmaster", id: input.id }
        const version = yield* resolveUnknownOutcome(write, (elapsedMs) =>
          writeOutcome(valkey, { key: doc, op, expectedVersion: input.expectedVersion, record, elapsedMs })
        )
        return { version, op }
      })

    const get = (id: string): Effect.Effect<StoredDocument, NotFound | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("workMaster", { id })
        const hash = yield* typedCommand(valkey, "get workmaster", key, "hash", (c) => c.hgetall(key))
        return parseDocumentHash(id, hash) ?? (yield* new NotFound({ key, message: `work master ${id} does not exist` }))
      })

    const remove = (
      input: DeleteWorkMaster
    ): Effect.Effect<Written, NotFound | VersionConflict | StateMoved | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const expectedVersion = input.expectedVersion ?? -1
        yield* validateExpectedVersion(expectedVersion)
        const doc = yield* valkey.key("workMaster", { id: input.id })
        const op = input.op ?? newOperationId()
        const attempt = (n: number) =>
          Effect.gen(function* () {
            // The set key depends on the stored scope: read it, pass it, let the script re-check it.
            const scope = yield* readForWrite(
              doc,
              n,
              typedCommand(valkey, "read workmaster scope", doc, "hash", (c) => c.hget(doc, "scope"))
            )
            if (scope === null) return yield* new NotFound({ key: doc, message: `work master ${input.id} does not exist` })
            const list = yield* valkey.key("workMasterList", { scope })
            const changes = yield* valkey.key("changes", { scope })
            const reply = yield* valkey.script(deleteWorkMaster, { doc, list, scopes: scopesKey, changes }, {
              expectedVersion,
              scope,
              id: input.id,
              op,
              change: input.change ?? "delete",
              nudgeChannel
            })
            return reply.status === "retry" ? moved : yield* writeResult(doc, expectedVersion, scope, reply)
          })
        const version = yield* retryWhileMoved(doc, attempt)
        return { version, op }
      })

    /** Every work master id of a scope, sorted (a scope holds tens to hundreds, not millions). */
    const list = (scope: string): Effect.Effect<ReadonlyArray<string>, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("workMasterList", { scope })
        const ids = yield* typedCommand(valkey, "list workmasters", key, "set", (c) => c.smembers(key))
        return ids.sort()
      })

    const isMember = (scope: string, id: string): Effect.Effect<boolean, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        yield* valkey.key("workMaster", { id }) // an id that could never be stored is bad input, not "no"
        const key = yield* valkey.key("workMasterList", { scope })
        return (yield* typedCommand(valkey, "is workmaster", key, "set", (c) => c.sismember(key, id))) === 1
      })

    /** The unknown-outcome check: `Some(version)` when the write `op` of `id` landed (see {@link operationLanded}). */
    const outcome = (id: string, op: string): Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError> =>
      valkey.key("workMaster", { id }).pipe(Effect.flatMap((key) => operationLanded(valkey, key, op, { kind: "workmaster", id })))

    return { put, get, delete: remove, list, isMember, outcome } as const
  })
}) {}
