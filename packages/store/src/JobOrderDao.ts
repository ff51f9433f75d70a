import { Effect, Option, Context, Layer } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import { deleteJobOrder, listJobOrders, putJobOrder } from "@microdcs/lua-scripts"
import type { StoredDocument, Written } from "./Document.js"
import type { DeleteJobOrder, PutJobOrder } from "./JobOrderInput.js"
import { keyProblem, numberProblem } from "./DocumentInput.js"
import { makeDocumentDao, type PutOutcome } from "./DocumentDao.js"
import { isReplyError } from "./FailureKind.js"
import { cachedKey } from "./KeyCache.js"
import {
  type ConnectionError,
  type InvalidInput,
  type LimitReached,
  type NotFound,
  type ScopeConflict,
  type StateMoved,
  type VersionConflict,
  WrongType
} from "./Errors.js"
import { Valkey, type ValkeyService } from "./Valkey.js"
import { admissionFrom, type JobOrderAdmission } from "./Admission.js"
import { wrongTypeError } from "./WriteReplies.js"
import { command } from "./RawDoor.js"
import type { DoneMark } from "./DoneMark.js"
import { createMarkingDone as createWithMark } from "./JobOrderCreateDone.js"
import { jobOrderSearchFacts } from "./JobOrderSearchFacts.js"

export type { DeleteJobOrder, PutJobOrder } from "./JobOrderInput.js"

export type { JobOrderAdmission } from "./Admission.js"

const wrongTypeMarker = { wrongType: true } as const

export interface JobOrderPage {
  readonly items: ReadonlyArray<{ readonly id: string; readonly priority: number }>
  /** Offset of the next page, or `null` on the last one. */
  readonly next: number | null
}

/** One page of a scope's list, highest priority first with ties by id ascending: no single Valkey range gives that order. */
const listPage = (valkey: ValkeyService, list: string, offset: number, count: number) =>
  valkey
    .script(listJobOrders, { list }, { offset, count })
    .pipe(Effect.flatMap((reply) => (reply.status === "wrongtype" ? Effect.fail(wrongTypeError(reply)) : Effect.succeed(reply.items))))

/** The document DAO of job orders: the put and delete scripts keep the scope's priority list and search index (a put passes the doc's search facts). */
const jobOrderDocuments = (valkey: ValkeyService) => {
  const listKey = cachedKey((scope) => valkey.keys.key("jobOrderList", { scope }))
  const searchKey = cachedKey((scope) => valkey.keys.key("jobOrderSearch", { scope }))
  const failedKey = cachedKey((scope) => valkey.keys.key("jobResponseFailed", { scope }))
  // A retired or deleted order's responses leave the scope's failed set (no longer incidents).
  const unfailKeys = (scope: string, orderId: string) => {
    const responses = valkey.keys.key("jobResponseOfOrder", { orderId })
    if (responses instanceof KeyPartError) return responses
    const failed = failedKey(scope)
    return failed instanceof KeyPartError ? failed : { responses, failed }
  }
  return makeDocumentDao(valkey, {
    kind: "joborder",
    noun: "job order",
    documentKey: (id) => valkey.keys.key("jobOrder", { id }),
    put: {
      script: putJobOrder,
      check: (input: PutJobOrder) => numberProblem("priority", input.priority),
      call: (input: PutJobOrder, write) => {
        const list = listKey(input.scope)
        if (list instanceof KeyPartError) return list
        const search = searchKey(input.scope)
        if (search instanceof KeyPartError) return search
        const unfail = unfailKeys(input.scope, input.id)
        if (unfail instanceof KeyPartError) return unfail
        const { expectedVersion, scope, id, op, change, nudgeChannel } = write.args
        return {
          keys: { doc: write.key, list, scopes: write.scopes, changes: write.changes, search, ...unfail },
          args: { expectedVersion, scope, id, priority: input.priority, doc: input.doc, op, change, nudgeChannel, limit: input.limit ?? 0, retainMs: input.retainMs ?? 0, origin: input.origin ?? "",
            facts: jobOrderSearchFacts(input.doc) }
        }
      }
    },
    delete: {
      script: deleteJobOrder,
      call: (_: DeleteJobOrder, write) => {
        const list = listKey(write.args.scope)
        if (list instanceof KeyPartError) return list
        const search = searchKey(write.args.scope)
        if (search instanceof KeyPartError) return search
        const unfail = unfailKeys(write.args.scope, write.args.id)
        if (unfail instanceof KeyPartError) return unfail
        return { keys: { doc: write.key, list, scopes: write.scopes, changes: write.changes, search, ...unfail }, args: write.args }
      }
    },
    list: { key: listKey, read: (list, offset, count) => listPage(valkey, list, offset, count) }
  })
}

/**
 * Whether job order `id` exists and the acceptance limit of `scope`, in one round trip (the
 * two reads Store makes before its create-only put). A key of another type is `WrongType`.
 */
const admission = (valkey: ValkeyService, id: string, scope: string): Effect.Effect<JobOrderAdmission, WrongType | InvalidInput | ConnectionError> =>
  Effect.suspend((): Effect.Effect<JobOrderAdmission, WrongType | InvalidInput | ConnectionError> => {
    const key = valkey.keys.key("jobOrder", { id })
    if (key instanceof KeyPartError) return Effect.fail(keyProblem(key))
    const limitKey = valkey.keys.key("jobAcceptance", { scope })
    if (limitKey instanceof KeyPartError) return Effect.fail(keyProblem(limitKey))
    // TYPE never fails on a key of another type, so the three go out together and the
    // limit's own type tells a WRONGTYPE of its GET apart.
    return command(valkey, "read job order admission", (c) =>
        Promise.all([
          c.type(key),
          c.type(limitKey),
          c.get(limitKey).catch((error: unknown) => {
            if (isReplyError(error) && error.message.startsWith("WRONGTYPE")) return wrongTypeMarker
            throw error
          })
        ])
      )
      .pipe(
        Effect.flatMap(([docType, limitType, stored]): Effect.Effect<JobOrderAdmission, WrongType> => {
          if (docType !== "none" && docType !== "hash") return Effect.fail(new WrongType({ key, expected: "hash", actual: docType }))
          if (limitType !== "none" && limitType !== "string") return Effect.fail(new WrongType({ key: limitKey, expected: "string", actual: limitType }))
          // The key changed type between its TYPE and its GET.
          if (stored === wrongTypeMarker) return Effect.fail(new WrongType({ key: limitKey, expected: "string", actual: limitType }))
          if (stored !== null && typeof stored !== "string") return Effect.die(new Error(`${limitKey} gave no string`))
          return admissionFrom(docType === "hash", stored, limitKey)
        })
      )
  })

/** Job order documents: `joborder:{id}` plus the per-scope priority list. */
export class JobOrderDao extends Context.Service<JobOrderDao>()("@microdcs/store/JobOrderDao", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const documents = jobOrderDocuments(valkey)

    const put: (
      input: PutJobOrder
    ) => Effect.Effect<Written, VersionConflict | ScopeConflict | LimitReached | WrongType | InvalidInput | ConnectionError> = documents.put
    /**
     * Many puts in one batch: each item checked as `put` checks it, the valid ones sent together,
     * one outcome per item in order (a refused or conflicting item fails alone; see `PutOutcome`).
     */
    const putMany: (
      inputs: ReadonlyArray<PutJobOrder>
    ) => Effect.Effect<
      ReadonlyArray<PutOutcome<VersionConflict | ScopeConflict | LimitReached | WrongType | InvalidInput | ConnectionError>>,
      InvalidInput
    > = documents.putMany
    const get: (id: string) => Effect.Effect<StoredDocument, NotFound | WrongType | InvalidInput | ConnectionError> = documents.get
    /** The job orders of `ids` in one round trip, in order; missing ones are skipped (no `NotFound` to build). */
    const getMany: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredDocument>, WrongType | InvalidInput | ConnectionError> =
      documents.getMany
    const remove: (
      input: DeleteJobOrder
    ) => Effect.Effect<Written, NotFound | VersionConflict | StateMoved | WrongType | InvalidInput | ConnectionError> = documents.delete
    /** Job orders of a scope, highest priority first (ties by id, ascending), `count` per page from `offset`. */
    const list: (
      scope: string,
      page?: { readonly offset?: number | undefined; readonly count?: number | undefined }
    ) => Effect.Effect<JobOrderPage, WrongType | InvalidInput | ConnectionError> = documents.list
    /** The unknown-outcome check: `Some(version)` when the write `op` of `id` landed (see `operationLanded`). */
    const outcome: (id: string, op: string) => Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError> =
      documents.outcome

    /**
     * A create-only put that also writes the done mark of the request that asked for it, in one
     * atomic step while the mark's claim is still the caller's (see `createMarkingDone`).
     */
    const createMarkingDone = (input: PutJobOrder, mark: DoneMark) => createWithMark(valkey, input, mark)

    return {
      put,
      putMany,
      createMarkingDone,
      get,
      getMany,
      admission: (id: string, scope: string) => admission(valkey, id, scope),
      delete: remove,
      list,
      outcome
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
