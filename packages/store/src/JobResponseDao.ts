import { Effect, type Option, Context, Layer } from "effect"
import { KeyPartError, type KeySchema } from "@microdcs/keyschema"
import { deleteJobResponse, findJobResponseByOrder, putJobResponse } from "@microdcs/lua-scripts"
import type { ExpectedVersion, StoredDocument, Written } from "./Document.js"
import { numberProblem } from "./DocumentInput.js"
import { makeDocumentDao } from "./DocumentDao.js"
import type { DocumentWrite, StoredFields } from "./DocumentSpec.js"
import {
  type ConnectionError,
  InvalidInput,
  NotFound,
  type ScopeConflict,
  type StateMoved,
  type VersionConflict,
  type WrongType
} from "./Errors.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey, type ValkeyService } from "./Valkey.js"
import { wrongTypeError } from "./WriteReplies.js"

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
  /** End time in epoch ms: the order of the scope's failed set (see `JobResponseFailures`); absent = the start time. */
  readonly endTime?: number | undefined
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

/** SSCAN cursors are unsigned 64-bit: a longer decimal is a server error, so it is refused here. */
const MAX_CURSOR = 2n ** 64n - 1n

const validateCursor = (cursor: string) =>
  typeof cursor === "string" && /^\d+$/.test(cursor) && BigInt(cursor) <= MAX_CURSOR
    ? Effect.void
    : Effect.fail(new InvalidInput({ field: "cursor", message: `cursor must be a decimal below 2^64, got '${cursor}'` }))

/** The by-state set of `state`, or the document key as the unused-slot placeholder when `state` is "". */
const stateKeyOrPlaceholder = (keys: KeySchema, scope: string, state: string, placeholder: string) =>
  state === "" ? placeholder : keys.key("jobResponseByState", { scope, state })

/** The by-order pointer and response set of `orderId`, or the placeholder for both when it is "". */
const orderKeysOrPlaceholder = (keys: KeySchema, orderId: string, placeholder: string) => {
  if (orderId === "") return { order: placeholder, responses: placeholder }
  const order = keys.key("jobResponseByOrder", { orderId })
  if (order instanceof KeyPartError) return order
  const responses = keys.key("jobResponseOfOrder", { orderId })
  return responses instanceof KeyPartError ? responses : { order, responses }
}

/** One put attempt's call, from the keys of the input and the state and order stored before it. */
const putAttempt = (
  keys: KeySchema,
  input: PutJobResponse,
  write: DocumentWrite,
  list: string,
  newState: string,
  newOrder: string,
  newResponses: string,
  failed: { readonly failed: string; readonly orders: string },
  [storedState, storedOrder]: StoredFields
) => {
  const doc = write.key
  const oldState = stateKeyOrPlaceholder(keys, input.scope, storedState ?? "", doc)
  if (oldState instanceof KeyPartError) return oldState
  const old = orderKeysOrPlaceholder(keys, storedOrder ?? "", doc)
  if (old instanceof KeyPartError) return old
  const { expectedVersion, scope, id, op, change, nudgeChannel } = write.args
  return {
    keys: {
      doc, list, newState, oldState, newOrder, oldOrder: old.order, scopes: write.scopes, changes: write.changes, newResponses,
      oldResponses: old.responses, ...failed
    },
    args: {
      expectedVersion, scope, id, op, change, nudgeChannel,
      state: input.state,
      storedState: storedState ?? "",
      orderId: input.orderId,
      storedOrderId: storedOrder ?? "",
      startTime: input.startTime ?? 0,
      endTime: input.endTime ?? input.startTime ?? 0,
      doc: input.doc
    }
  }
}

/** A put's keys that follow from its input, then the builder of each attempt: the old by-state set and by-order pointer follow from the stored values. */
const putCall = (keys: KeySchema, input: PutJobResponse, write: DocumentWrite) => {
  const list = keys.key("jobResponseList", { scope: input.scope })
  if (list instanceof KeyPartError) return list
  const newState = stateKeyOrPlaceholder(keys, input.scope, input.state, write.key)
  if (newState instanceof KeyPartError) return newState
  // An order id is never "" here: its pointer key refuses an empty part.
  const newOrder = keys.key("jobResponseByOrder", { orderId: input.orderId })
  if (newOrder instanceof KeyPartError) return newOrder
  const newResponses = keys.key("jobResponseOfOrder", { orderId: input.orderId })
  if (newResponses instanceof KeyPartError) return newResponses
  const failed = keys.key("jobResponseFailed", { scope: input.scope })
  if (failed instanceof KeyPartError) return failed
  // Read by the script: an Aborted response joins the failed set only while its job order is listed.
  const orders = keys.key("jobOrderList", { scope: input.scope })
  if (orders instanceof KeyPartError) return orders
  return (stored: StoredFields) => putAttempt(keys, input, write, list, newState, newOrder, newResponses, { failed, orders }, stored)
}

/** A delete's call, from the state and order stored. */
const deleteCall = (keys: KeySchema, write: DocumentWrite, [storedState, storedOrder]: StoredFields) => {
  const { scope } = write.args
  const state = storedState ?? ""
  const orderId = storedOrder ?? ""
  const list = keys.key("jobResponseList", { scope })
  if (list instanceof KeyPartError) return list
  const stateKey = stateKeyOrPlaceholder(keys, scope, state, write.key)
  if (stateKey instanceof KeyPartError) return stateKey
  const order = orderKeysOrPlaceholder(keys, orderId, write.key)
  if (order instanceof KeyPartError) return order
  const failed = keys.key("jobResponseFailed", { scope })
  if (failed instanceof KeyPartError) return failed
  return {
    keys: { doc: write.key, list, state: stateKey, order: order.order, responses: order.responses, scopes: write.scopes, changes: write.changes, failed },
    args: { ...write.args, state, orderId }
  }
}

/** One page of a scope's list by start time, oldest first. */
const listPage = (valkey: ValkeyService, list: string, offset: number, count: number) =>
  typedCommand(valkey, "list jobresponses", list, "zset", (c) => c.zrange(list, offset, offset + count - 1, "WITHSCORES")).pipe(
    Effect.map((flat) => {
      const items: Array<{ readonly id: string; readonly startTime: number }> = []
      for (let i = 0; i < flat.length; i += 2) items.push({ id: flat[i]!, startTime: Number(flat[i + 1]) })
      return items
    })
  )

/** The document DAO of job responses: the put and delete scripts keep the list, the by-order pointer and the by-state sets. */
const jobResponseDocuments = (valkey: ValkeyService) => {
  const { keys } = valkey
  return makeDocumentDao(valkey, {
    kind: "jobresponse",
    noun: "job response",
    documentKey: (id) => keys.key("jobResponse", { id }),
    parse: parseResponseHash,
    put: {
      script: putJobResponse,
      check: (input: PutJobResponse) => numberProblem("startTime", input.startTime ?? 0) ?? numberProblem("endTime", input.endTime ?? 0),
      // The old by-state set and by-order pointer follow from the stored values: read, pass, re-check.
      read: ["state", "order"],
      call: (input: PutJobResponse, write) => putCall(keys, input, write)
    },
    delete: { script: deleteJobResponse, read: ["state", "order"], call: (_: DeleteJobResponse, write, stored) => deleteCall(keys, write, stored) },
    list: { key: (scope) => keys.key("jobResponseList", { scope }), read: (list, offset, count) => listPage(valkey, list, offset, count) }
  })
}

/** The response of a job order, pointer and document in one round trip. */
const byOrder = (valkey: ValkeyService, documentKeyHead: string, orderId: string): Effect.Effect<JobResponseDocument, NotFound | WrongType | InvalidInput | ConnectionError> =>
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
  valkey: ValkeyService,
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
    const [next, ids] = yield* typedCommand(valkey, "scan jobresponse state", key, "set", (c) => c.sscan(key, cursor, "COUNT", pageSize))
    return { ids, next: next === "0" ? null : next }
  })

/**
 * Job response documents: `jobresponse:{id}` plus the list by
 * start time, the by-order pointer and the by-state sets, all maintained inside the put script.
 */
export class JobResponseDao extends Context.Service<JobResponseDao>()("@microdcs/store/JobResponseDao", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    // The by-order script appends the encoded id itself (see its header); the head comes from the builder.
    const documentKeyHead = (valkey.keys.key("jobResponse", { id: "_" }) as string).slice(0, -1)
    const documents = jobResponseDocuments(valkey)

    const put: (
      input: PutJobResponse
    ) => Effect.Effect<Written, VersionConflict | ScopeConflict | StateMoved | WrongType | InvalidInput | ConnectionError> = documents.put
    const get: (id: string) => Effect.Effect<JobResponseDocument, NotFound | WrongType | InvalidInput | ConnectionError> = documents.get
    /** Fetches the documents of `ids` (a by-state page) in one round trip, in order; missing ones are skipped. */
    const getMany: (
      ids: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<JobResponseDocument>, WrongType | InvalidInput | ConnectionError> = documents.getMany
    const remove: (
      input: DeleteJobResponse
    ) => Effect.Effect<Written, NotFound | VersionConflict | StateMoved | WrongType | InvalidInput | ConnectionError> = documents.delete
    /** Job responses of a scope by start time, oldest first (ties by id), `count` per page from `offset`. */
    const list: (
      scope: string,
      page?: { readonly offset?: number | undefined; readonly count?: number | undefined }
    ) => Effect.Effect<JobResponsePage, WrongType | InvalidInput | ConnectionError> = documents.list
    /** The unknown-outcome check: `Some(version)` when the write `op` of `id` landed (see `operationLanded`). */
    const outcome: (id: string, op: string) => Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError> =
      documents.outcome

    return {
      put, get, getMany, delete: remove, list, outcome,
      byOrder: (orderId: string) => byOrder(valkey, documentKeyHead, orderId),
      byState: (scope: string, state: string, cursor?: string, pageSize?: number) => byState(valkey, scope, state, cursor, pageSize)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
