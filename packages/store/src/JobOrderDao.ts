import { Effect, Option } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import { deleteJobOrder, listJobOrders, putJobOrder } from "@microdcs/lua-scripts"
import {
  type ConnectionError,
  type InvalidInput,
  type LimitReached,
  NotFound,
  type ScopeConflict,
  StateMoved,
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
  documentProblem,
  expectedVersionProblem,
  keyProblem,
  numberProblem,
  validateExpectedVersion,
  writeResult,
  type Written
} from "./Document.js"
import { typedCommand, wrongTypeError } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"

export interface PutJobOrder {
  readonly id: string
  readonly scope: string
  /** The job order as JSON text. */
  readonly doc: string
  /** OPC UA priority: a higher value wins, so lists put it first. */
  readonly priority: number
  readonly expectedVersion: ExpectedVersion
  /** The method that caused the write (`Store`, `Start`, ...); default `put`. */
  readonly change?: string | undefined
  /** Operation id stored with the write; default a new UUID. Pass your own to make retries idempotent. */
  readonly op?: string | undefined
  /** Acceptance limit counted inside the script when the id is not yet listed; 0 or absent = none. */
  readonly limit?: number | undefined
  /** Retire the job order: take it out of the scope list and let the document expire after this many ms. */
  readonly retainMs?: number | undefined
}

export interface DeleteJobOrder {
  readonly id: string
  readonly expectedVersion?: ExpectedVersion | undefined
  readonly op?: string | undefined
  readonly change?: string | undefined
}

export interface JobOrderPage {
  readonly items: ReadonlyArray<{ readonly id: string; readonly priority: number }>
  /** Offset of the next page, or `null` on the last one. */
  readonly next: number | null
}

/** How often a delete re-reads when the scope it read moved under it. */
const MAX_INDEX_RETRIES = 5

/** Job order documents: `joborder:{id}` plus the per-scope priority list (data-layer.md §5, R-8..R-11). */
export class JobOrderDao extends Effect.Service<JobOrderDao>()("@microdcs/store/JobOrderDao", {
  effect: Effect.gen(function* () {
    const valkey = yield* Valkey
    const nudgeChannel = valkey.keys.key("nudge", { kind: "changes" }) as string
    const scopesKey = valkey.keys.key("scopes", {}) as string

    const put = (
      input: PutJobOrder
    ): Effect.Effect<Written, VersionConflict | ScopeConflict | LimitReached | WrongType | InvalidInput | ConnectionError> =>
      // The hot path of every island: checks and keys are plain synchronous code, so a put is
      // one suspended step, the script call and the reply mapping.
      Effect.suspend((): Effect.Effect<Written, VersionConflict | ScopeConflict | LimitReached | WrongType | InvalidInput | ConnectionError> => {
        const problem =
          expectedVersionProblem(input.expectedVersion) ??
          numberProblem("priority", input.priority) ??
          documentProblem("doc", input.doc, valkey.maxDocumentBytes)
        if (problem) return Effect.fail(problem)
        const doc = valkey.keys.key("jobOrder", { id: input.id })
        if (doc instanceof KeyPartError) return Effect.fail(keyProblem(doc))
        const list = valkey.keys.key("jobOrderList", { scope: input.scope })
        if (list instanceof KeyPartError) return Effect.fail(keyProblem(list))
        const changes = valkey.keys.key("changes", { scope: input.scope }) as string
        const op = input.op ?? newOperationId()
        const write = valkey
          .script(putJobOrder, { doc, list, scopes: scopesKey, changes }, {
            expectedVersion: input.expectedVersion,
            scope: input.scope,
            id: input.id,
            priority: input.priority,
            doc: input.doc,
            op,
            change: input.change ?? "put",
            nudgeChannel,
            limit: input.limit ?? 0,
            retainMs: input.retainMs ?? 0
          })
          .pipe(Effect.flatMap((reply) => writeResult(doc, input.expectedVersion, input.scope, reply)))
        const record = { changes, kind: "joborder", id: input.id }
        return resolveUnknownOutcome(write, (elapsedMs) =>
          writeOutcome(valkey, { key: doc, op, expectedVersion: input.expectedVersion, record, elapsedMs })
        ).pipe(Effect.map((version): Written => ({ version, op })))
      })

    const get = (id: string): Effect.Effect<StoredDocument, NotFound | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("jobOrder", { id })
        const hash = yield* typedCommand(valkey, "get joborder", key, "hash", (c) => c.hgetall(key))
        const found = parseDocumentHash(id, hash)
        return found ?? (yield* new NotFound({ key, message: `job order ${id} does not exist` }))
      })

    const remove = (
      input: DeleteJobOrder
    ): Effect.Effect<Written, NotFound | VersionConflict | StateMoved | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const expectedVersion = input.expectedVersion ?? -1
        yield* validateExpectedVersion(expectedVersion)
        const doc = yield* valkey.key("jobOrder", { id: input.id })
        const op = input.op ?? newOperationId()
        for (let attempt = 1; attempt <= MAX_INDEX_RETRIES; attempt++) {
          // The list key depends on the stored scope: read it, pass it, let the script re-check it.
          const scope = yield* typedCommand(valkey, "read joborder scope", doc, "hash", (c) => c.hget(doc, "scope"))
          if (scope === null) return yield* new NotFound({ key: doc, message: `job order ${input.id} does not exist` })
          const list = yield* valkey.key("jobOrderList", { scope })
          const changes = yield* valkey.key("changes", { scope })
          const reply = yield* valkey.script(deleteJobOrder, { doc, list, scopes: scopesKey, changes }, {
            expectedVersion,
            scope,
            id: input.id,
            op,
            change: input.change ?? "delete",
            nudgeChannel
          })
          if (reply.status === "retry") continue
          const version = yield* writeResult(doc, expectedVersion, scope, reply)
          return { version, op }
        }
        return yield* new StateMoved({ key: doc, attempts: MAX_INDEX_RETRIES })
      })

    /** Job orders of a scope, highest priority first (ties by id, ascending), `count` per page from `offset`. */
    const list = (
      scope: string,
      page: { readonly offset?: number | undefined; readonly count?: number | undefined } = {}
    ): Effect.Effect<JobOrderPage, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("jobOrderList", { scope })
        const problem = numberProblem("offset", page.offset ?? 0) ?? numberProblem("count", page.count ?? 100)
        if (problem) return yield* problem
        const offset = Math.max(0, Math.floor(page.offset ?? 0))
        const count = Math.max(1, Math.floor(page.count ?? 100))
        // One more than asked tells whether a next page exists.
        const reply = yield* valkey.script(listJobOrders, { list: key }, { offset, count: count + 1 })
        if (reply.status === "wrongtype") return yield* wrongTypeError(reply)
        const more = reply.items.length > count
        return { items: more ? reply.items.slice(0, count) : reply.items, next: more ? offset + count : null }
      })

    /** The unknown-outcome check: `Some(version)` when the write `op` of `id` landed (see {@link operationLanded}). */
    const outcome = (id: string, op: string): Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError> =>
      valkey.key("jobOrder", { id }).pipe(Effect.flatMap((key) => operationLanded(valkey, key, op, { kind: "joborder", id })))

    return { put, get, delete: remove, list, outcome } as const
  })
}) {}
