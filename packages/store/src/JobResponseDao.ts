import { Effect, Option } from "effect"
import { deleteJobResponse, findJobResponseByOrder, putJobResponse } from "@microdcs/lua-scripts"
import {
  type ConnectionError,
  InvalidInput,
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
  resolveUnknownOutcome,
  writeOutcome,
  type StoredDocument,
  validateDocument,
  validateExpectedVersion,
  validateNumber,
  writeResult,
  type Written
} from "./Document.js"
import { moved, readForWrite, retryWhileMoved } from "./IndexPrecondition.js"
import { typedCommand, typedPipeline, wrongTypeError } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"

/**
 * The index form of a job response state: the non-empty state texts joined with `_`.
 * An empty result means "not indexed by state".
 */
export const normalizeState = (texts: ReadonlyArray<string>): string => texts.filter((t) => t.length > 0).join("_")

/** A stored job response: the document plus the two index fields kept beside it. */
export interface JobResponseDocument extends StoredDocument {
  /** The normalized state as stored ("" = not indexed). */
  readonly state: string
  readonly orderId: string
}

export interface PutJobResponse {
  readonly id: string
  readonly scope: string
  /** The job order this responds to; `byOrder` finds the response by it. */
  readonly orderId: string
  /**
   * The state as already-normalized text, i.e. the result of {@link normalizeState}; the DAO
   * does not split or join it. `""` = not indexed by state.
   */
  readonly state: string
  /** Start time in epoch ms, the list order; absent = 0. */
  readonly startTime?: number | undefined
  /** The job response as JSON text. */
  readonly doc: string
  readonly expectedVersion: ExpectedVersion
  /** The method that caused the write (`ResultUpdate`, ...); default `put`. */
  readonly change?: string | undefined
  /** Operation id stored with the write; default a new UUID. Pass your own to make retries idempotent. */
  readonly op?: string | undefined
}

export interface DeleteJobResponse {
  readonly id: string
  readonly expectedVersion?: ExpectedVersion | undefined
  readonly op?: string | undefined
  readonly change?: string | undefined
}

export interface JobResponsePage {
  /** Oldest start time first, ties by id. */
  readonly items: ReadonlyArray<{ readonly id: string; readonly startTime: number }>
  /** Offset of the next page, or `null` on the last one. */
  readonly next: number | null
}

export interface StatePage {
  /** Response ids; SSCAN may return an id twice across pages while the set is resized. */
  readonly ids: ReadonlyArray<string>
  /** Cursor of the next page, or `null` when the scan is complete. */
  readonly next: string | null
}

const parseResponseHash = (id: string, hash: Record<string, string>): JobResponseDocument | undefined => {
  if (hash["v"] === undefined || hash["doc"] === undefined) return undefined
  return {
    id,
    scope: hash["scope"] ?? "",
    version: Number(hash["v"]),
    op: hash["op"] ?? "",
    doc: hash["doc"],
    state: hash["state"] ?? "",
    orderId: hash["order"] ?? ""
  }
}

const validatePageSize = (pageSize: number) =>
  Number.isSafeInteger(pageSize) && pageSize > 0
    ? Effect.void
    : Effect.fail(new InvalidInput({ field: "pageSize", message: `pageSize must be a positive integer, got ${pageSize}` }))

const validateCursor = (cursor: string) =>
  /^\d+$/.test(cursor) ? Effect.void : Effect.fail(new InvalidInput({ field: "cursor", message: `cursor must be a decimal, got '${cursor}'` }))

/**
 * Job response documents (data-layer.md §5, R-12..R-15): `jobresponse:{id}` plus the list by
 * start time, the by-order pointer and the by-state sets, all maintained inside the put script.
 */
export class JobResponseDao extends Effect.Service<JobResponseDao>()("@microdcs/store/JobResponseDao", {
  effect: Effect.gen(function* () {
    const valkey = yield* Valkey
    const nudgeChannel = valkey.keys.key("nudge", { kind: "changes" }) as string
    const scopesKey = valkey.keys.key("scopes", {}) as string
    // The by-order script appends the encoded id itself (see its header); the head comes from the builder.
    const documentKeyHead = (valkey.keys.key("jobResponse", { id: "_" }) as string).slice(0, -1)

    /** The by-state set of `state`, or the document key as the unused-slot placeholder when `state` is "". */
    const stateKeyOrPlaceholder = (scope: string, state: string, placeholder: string) =>
      state === "" ? Effect.succeed(placeholder) : valkey.key("jobResponseByState", { scope, state })

    const put = (
      input: PutJobResponse
    ): Effect.Effect<Written, VersionConflict | ScopeConflict | StateMoved | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const startTime = input.startTime ?? 0
        yield* validateExpectedVersion(input.expectedVersion)
        yield* validateNumber("startTime", startTime)
        yield* validateDocument("doc", input.doc, valkey.maxDocumentBytes)
        const doc = yield* valkey.key("jobResponse", { id: input.id })
        const list = yield* valkey.key("jobResponseList", { scope: input.scope })
        const newState = yield* stateKeyOrPlaceholder(input.scope, input.state, doc)
        const newOrder = yield* valkey.key("jobResponseByOrder", { orderId: input.orderId })
        const newResponses = yield* valkey.key("jobResponseOfOrder", { orderId: input.orderId })
        const changes = yield* valkey.key("changes", { scope: input.scope })
        const op = input.op ?? newOperationId()

        const attempt = (n: number) =>
          Effect.gen(function* () {
            // The old by-state set and by-order pointer follow from the stored values: read, pass, re-check.
            const [storedState, storedOrder] = yield* readForWrite(
              doc,
              n,
              typedCommand(valkey, "read jobresponse indexes", doc, "hash", (c) => c.hmget(doc, "state", "order"))
            )
            const oldState = yield* stateKeyOrPlaceholder(input.scope, storedState ?? "", doc)
            const oldOrder = storedOrder ? yield* valkey.key("jobResponseByOrder", { orderId: storedOrder }) : doc
            const oldResponses = storedOrder ? yield* valkey.key("jobResponseOfOrder", { orderId: storedOrder }) : doc
            const reply = yield* valkey.script(
              putJobResponse,
              { doc, list, newState, oldState, newOrder, oldOrder, scopes: scopesKey, changes, newResponses, oldResponses },
              {
                expectedVersion: input.expectedVersion,
                scope: input.scope,
                id: input.id,
                state: input.state,
                storedState: storedState ?? "",
                orderId: input.orderId,
                storedOrderId: storedOrder ?? "",
                startTime,
                doc: input.doc,
                op,
                change: input.change ?? "put",
                nudgeChannel
              }
            )
            return reply.status === "retry" ? moved : yield* writeResult(doc, input.expectedVersion, input.scope, reply)
          })
        const record = { changes, kind: "jobresponse", id: input.id }
        const version = yield* resolveUnknownOutcome(retryWhileMoved(doc, attempt), (elapsedMs) =>
          writeOutcome(valkey, { key: doc, op, expectedVersion: input.expectedVersion, record, elapsedMs })
        )
        return { version, op }
      })

    const get = (id: string): Effect.Effect<JobResponseDocument, NotFound | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("jobResponse", { id })
        const hash = yield* typedCommand(valkey, "get jobresponse", key, "hash", (c) => c.hgetall(key))
        return parseResponseHash(id, hash) ?? (yield* new NotFound({ key, message: `job response ${id} does not exist` }))
      })

    /** Fetches the documents of `ids` (a by-state page) in one round trip, in order; missing ones are skipped. */
    const getMany = (
      ids: ReadonlyArray<string>
    ): Effect.Effect<ReadonlyArray<JobResponseDocument>, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        if (ids.length === 0) return []
        const keys = yield* Effect.forEach(ids, (id) => valkey.key("jobResponse", { id }))
        const hashes = yield* typedPipeline<Record<string, string>>(valkey, "get jobresponses", keys, "hash", (p, key) => p.hgetall(key))
        return ids.flatMap((id, i) => parseResponseHash(id, hashes[i] ?? {}) ?? [])
      })

    const remove = (
      input: DeleteJobResponse
    ): Effect.Effect<Written, NotFound | VersionConflict | StateMoved | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const expectedVersion = input.expectedVersion ?? -1
        yield* validateExpectedVersion(expectedVersion)
        const doc = yield* valkey.key("jobResponse", { id: input.id })
        const op = input.op ?? newOperationId()
        const attempt = (n: number) =>
          Effect.gen(function* () {
            const [scope, storedState, storedOrder] = yield* readForWrite(
              doc,
              n,
              typedCommand(valkey, "read jobresponse indexes", doc, "hash", (c) => c.hmget(doc, "scope", "state", "order"))
            )
            if (scope == null) return yield* new NotFound({ key: doc, message: `job response ${input.id} does not exist` })
            const state = storedState ?? ""
            const orderId = storedOrder ?? ""
            const reply = yield* valkey.script(
              deleteJobResponse,
              {
                doc,
                list: yield* valkey.key("jobResponseList", { scope }),
                state: yield* stateKeyOrPlaceholder(scope, state, doc),
                order: orderId === "" ? doc : yield* valkey.key("jobResponseByOrder", { orderId }),
                responses: orderId === "" ? doc : yield* valkey.key("jobResponseOfOrder", { orderId }),
                scopes: scopesKey,
                changes: yield* valkey.key("changes", { scope })
              },
              { expectedVersion, scope, state, orderId, id: input.id, op, change: input.change ?? "delete", nudgeChannel }
            )
            return reply.status === "retry" ? moved : yield* writeResult(doc, expectedVersion, scope, reply)
          })
        const version = yield* retryWhileMoved(doc, attempt)
        return { version, op }
      })

    /** The response of a job order, pointer and document in one round trip. */
    const byOrder = (orderId: string): Effect.Effect<JobResponseDocument, NotFound | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("jobResponseByOrder", { orderId })
        const reply = yield* valkey.script(findJobResponseByOrder, { byOrder: key }, { documentKeyHead, orderId })
        switch (reply.status) {
          case "ok":
            return reply.document
          case "notfound":
            return yield* new NotFound({ key, message: `no job response for job order ${orderId}` })
          case "wrongtype":
            return yield* wrongTypeError(reply)
        }
      })

    /**
     * One SSCAN page of the response ids in `scope` with the normalized `state`. Start
     * with cursor "0" (the default) and continue with `next` until it is `null`. An empty state
     * is never indexed, so it returns an empty, final page.
     */
    const byState = (
      scope: string,
      state: string,
      cursor = "0",
      pageSize = 1000
    ): Effect.Effect<StatePage, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        yield* validatePageSize(pageSize)
        yield* validateCursor(cursor)
        if (state === "") return { ids: [], next: null }
        const key = yield* valkey.key("jobResponseByState", { scope, state })
        const [next, ids] = yield* typedCommand(valkey, "scan jobresponse state", key, "set", (c) =>
          c.sscan(key, cursor, "COUNT", pageSize)
        )
        return { ids, next: next === "0" ? null : next }
      })

    /** Job responses of a scope by start time, oldest first (ties by id), `count` per page from `offset`. */
    const list = (
      scope: string,
      page: { readonly offset?: number | undefined; readonly count?: number | undefined } = {}
    ): Effect.Effect<JobResponsePage, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("jobResponseList", { scope })
        const offset = Math.max(0, Math.floor(page.offset ?? 0))
        const count = Math.max(1, Math.floor(page.count ?? 100))
        const flat = yield* typedCommand(valkey, "list jobresponses", key, "zset", (c) =>
          c.zrange(key, offset, offset + count, "WITHSCORES")
        )
        const items: Array<{ id: string; startTime: number }> = []
        for (let i = 0; i < flat.length; i += 2) items.push({ id: flat[i]!, startTime: Number(flat[i + 1]) })
        const more = items.length > count
        return { items: more ? items.slice(0, count) : items, next: more ? offset + count : null }
      })

    /** The unknown-outcome check: `Some(version)` when the write `op` of `id` landed (see {@link operationLanded}). */
    const outcome = (id: string, op: string): Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError> =>
      valkey.key("jobResponse", { id }).pipe(Effect.flatMap((key) => operationLanded(valkey, key, op, { kind: "jobresponse", id })))

    return { put, get, getMany, delete: remove, byOrder, byState, list, outcome } as const
  })
}) {}
