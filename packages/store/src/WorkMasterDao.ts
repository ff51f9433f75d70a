import { Effect, type Option, Context, Layer } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import { deleteWorkMaster, putWorkMaster } from "@microdcs/lua-scripts"
import type { ExpectedVersion, StoredDocument, Written } from "./Document.js"
import { makeDocumentDao } from "./DocumentDao.js"
import type { ConnectionError, InvalidInput, NotFound, ScopeConflict, StateMoved, VersionConflict, WrongType } from "./Errors.js"
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

/** Work master documents: `workmaster:{id}` plus the per-scope id set. */
export class WorkMasterDao extends Context.Service<WorkMasterDao>()("@microdcs/store/WorkMasterDao", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const setKey = (scope: string) => valkey.keys.key("workMasterList", { scope })

    const documents = makeDocumentDao(valkey, {
      kind: "workmaster",
      noun: "work master",
      documentKey: (id) => valkey.keys.key("workMaster", { id }),
      put: {
        script: putWorkMaster,
        call: (input: PutWorkMaster, write) => {
          const list = setKey(input.scope)
          if (list instanceof KeyPartError) return list
          const { expectedVersion, scope, id, op, change, nudgeChannel } = write.args
          return {
            keys: { doc: write.key, list, scopes: write.scopes, changes: write.changes },
            args: { expectedVersion, scope, id, doc: input.doc, op, change, nudgeChannel }
          }
        }
      },
      delete: {
        script: deleteWorkMaster,
        call: (_: DeleteWorkMaster, write) => {
          const list = setKey(write.args.scope)
          if (list instanceof KeyPartError) return list
          return { keys: { doc: write.key, list, scopes: write.scopes, changes: write.changes }, args: write.args }
        }
      }
    })

    const put: (input: PutWorkMaster) => Effect.Effect<Written, VersionConflict | ScopeConflict | WrongType | InvalidInput | ConnectionError> =
      documents.put
    const get: (id: string) => Effect.Effect<StoredDocument, NotFound | WrongType | InvalidInput | ConnectionError> = documents.get
    const remove: (
      input: DeleteWorkMaster
    ) => Effect.Effect<Written, NotFound | VersionConflict | StateMoved | WrongType | InvalidInput | ConnectionError> = documents.delete
    /** The unknown-outcome check: `Some(version)` when the write `op` of `id` landed (see `operationLanded`). */
    const outcome: (id: string, op: string) => Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError> =
      documents.outcome

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

    // getMany: many work masters in one pipelined read, in order; missing ones are left out.
    return { put, get, getMany: documents.getMany, delete: remove, list, isMember, outcome } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
