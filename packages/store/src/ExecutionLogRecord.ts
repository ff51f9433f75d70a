import { Data, Result } from "effect"

/**
 * The encoding of the execution log's values: UTF-8 JSON text with a
 * version field `v`. The engine encodes once; storage copies the bytes; only readers (the tree,
 * the CLI, the HTTP API) decode, here and nowhere else. It lives in the store, below both the
 * engine runtime (`@microdcs/sfc-runtime`, the writer) and `@microdcs/execution-log` (the
 * readers), so that one module is the format and neither package depends on the other.
 */
export const LOG_RECORD_VERSION = 1

/** How an execution ended, or that it runs. */
export type ExecutionStatus = "running" | "completed" | "failed" | "aborted" | "stopped"

/** The record of one execution, `dag:log:{executionId}:exec`. */
export interface ExecutionRecord {
  readonly v: typeof LOG_RECORD_VERSION
  readonly executionId: string
  readonly jobId: string
  readonly scope: string
  readonly workMasterId: string
  /** SHA-256 of the recipe the execution snapshot. */
  readonly recipeDigest: string
  /** The delegating node that created this child execution; absent for a top-level one. */
  readonly parent?: { readonly executionId: string; readonly seq: number } | undefined
  /** Epoch ms. */
  readonly openedAt: number
  readonly closedAt?: number | undefined
  readonly status: ExecutionStatus
  /** The highest sequence number given to a node so far (-1 before the first node). */
  readonly lastSeq: number
}

/** What a node was: a step visit, an action dispatch (resends and reply), an event, a transition, ... */
export type NodeKind =
  | "step" | "action" | "event" | "transition" | "timeout" | "pause" | "resume" | "stop" | "retry" | "error" | "branch"
  /** An operator's interventions (with `retry`): the detail names who (`by`) and why (`reason`). */
  | "skip-step" | "force-transition" | "set-result"

/** One node, `dag:log:{executionId}:n:{seq}`: opened before its body runs, closed when it ends. */
export interface NodeRecord {
  readonly v: typeof LOG_RECORD_VERSION
  readonly seq: number
  readonly kind: NodeKind
  /** The step, action, event type or transition it is about. */
  readonly name: string
  /** The visit of the step (or of the action's step) this node is about, when it is about one. */
  readonly visit?: number | undefined
  readonly openedAt: number
  /** Absent while the node is open: a running execution shows the node it is in. */
  readonly closedAt?: number | undefined
  /** A delegating node (a branch) holds the ids of the child executions it started. */
  readonly children?: ReadonlyArray<string> | undefined
  /** Result, reply or error, cut to the configured size (see {@link boundDetail}). */
  readonly detail?: unknown
}

/** A stored value that is not a record of this encoding (bad UTF-8 or JSON, unknown version, wrong shape). */
export class LogRecordInvalid extends Data.TaggedError("LogRecordInvalid")<{
  readonly key: string
  readonly message: string
}> {}

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

/** The text of an execution record: written as its UTF-8 bytes (what {@link encodeExecution} returns). */
export const executionText = (record: ExecutionRecord): string => JSON.stringify(record)

/** The text of a node record: written as its UTF-8 bytes (what {@link encodeNode} returns). */
export const nodeText = (record: NodeRecord): string => JSON.stringify(record)

export const encodeExecution = (record: ExecutionRecord): Uint8Array => encoder.encode(executionText(record))

export const encodeNode = (record: NodeRecord): Uint8Array => encoder.encode(nodeText(record))

/** The mark a cut detail carries, with the text it was cut from (its first `maxBytes`). */
export interface TruncatedDetail {
  readonly truncated: true
  readonly bytes: number
  readonly head: string
}

/**
 * A node's detail bounded to `maxBytes` of JSON: kept as it is when it fits, else replaced by a
 * {@link TruncatedDetail} marker holding the beginning of its JSON text.
 */
export const boundDetail = (detail: unknown, maxBytes: number): unknown => {
  const text = JSON.stringify(detail) ?? "null"
  const bytes = Buffer.byteLength(text, "utf8")
  if (bytes <= maxBytes) return detail
  // Cut on a character boundary: decode the first bytes leniently and drop a broken last char.
  const head = Buffer.from(text, "utf8").subarray(0, Math.max(0, maxBytes)).toString("utf8").replace(/\uFFFD$/, "")
  return { truncated: true, bytes, head } satisfies TruncatedDetail
}

const parse = (key: string, bytes: Uint8Array): Result.Result<Record<string, unknown>, LogRecordInvalid> => {
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes))
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return Result.fail(new LogRecordInvalid({ key, message: "the value is no JSON object" }))
    }
    const v = (value as { v?: unknown }).v
    if (v !== LOG_RECORD_VERSION) return Result.fail(new LogRecordInvalid({ key, message: `unknown record version ${JSON.stringify(v)}` }))
    return Result.succeed(value as Record<string, unknown>)
  } catch (error) {
    return Result.fail(new LogRecordInvalid({ key, message: `the value is no UTF-8 JSON text: ${error instanceof Error ? error.message : String(error)}` }))
  }
}

const isInt = (value: unknown): value is number => Number.isSafeInteger(value)
const isText = (value: unknown): value is string => typeof value === "string"

export const decodeExecution = (key: string, bytes: Uint8Array): Result.Result<ExecutionRecord, LogRecordInvalid> =>
  Result.flatMap(parse(key, bytes), (r) => {
    const parent = r["parent"] as { executionId?: unknown; seq?: unknown } | undefined
    const ok =
      isText(r["executionId"]) &&
      isText(r["jobId"]) &&
      isText(r["scope"]) &&
      isText(r["workMasterId"]) &&
      isText(r["recipeDigest"]) &&
      isText(r["status"]) &&
      typeof r["openedAt"] === "number" &&
      isInt(r["lastSeq"]) &&
      (parent === undefined || (typeof parent === "object" && parent !== null && isText(parent.executionId) && isInt(parent.seq)))
    return ok ? Result.succeed(r as unknown as ExecutionRecord) : Result.fail(new LogRecordInvalid({ key, message: "not an execution record" }))
  })

export const decodeNode = (key: string, bytes: Uint8Array): Result.Result<NodeRecord, LogRecordInvalid> =>
  Result.flatMap(parse(key, bytes), (r) => {
    const children = r["children"]
    const ok =
      isInt(r["seq"]) &&
      isText(r["kind"]) &&
      isText(r["name"]) &&
      typeof r["openedAt"] === "number" &&
      (r["visit"] === undefined || isInt(r["visit"])) &&
      (children === undefined || (Array.isArray(children) && children.every(isText)))
    return ok ? Result.succeed(r as unknown as NodeRecord) : Result.fail(new LogRecordInvalid({ key, message: "not a node record" }))
  })
