import { Result, Option } from "effect"
import {
  asJobOrder,
  fromNormalizedName,
  type JobOrder,
  type Method,
  methodPayload,
  normalizedName,
  parseRequestType,
  type Query,
  type StateName
} from "@microdcs/job-state"
import { type ConfigCommand, parseConfigCommand, parseConfigType } from "./ConfigCommand.js"
import { asId, BadRequest, ensureJson, isObject, malformed, missing, payloadObject, readComment, readCount, readId } from "./Payload.js"
import { type JobOrderReferences, referencesOf } from "./References.js"
import type { AdmissionTarget } from "@microdcs/store"
import { type JobControlRequest, replyTypeOf, scopeOf } from "./Request.js"

/** The methods that carry a whole JobOrder and run the acceptance checks. */
export type JobOrderMethod = "Store" | "StoreAndStart" | "Update"
/** The methods that carry a JobOrderID and only move the state. */
export type StateMethod = Exclude<Method, JobOrderMethod>

/** The largest page a state query may ask for (SSCAN COUNT is a hint, so this bounds the work of one reply). */
export const MAX_PAGE_SIZE = 1000

/** A request, parsed and checked: everything the processor needs, nothing it must still validate. */
export type Command =
  | {
      readonly _tag: "JobOrderMethod"
      readonly method: JobOrderMethod
      readonly scope: string
      readonly jobOrder: JobOrder
      readonly references: JobOrderReferences
      readonly comment: string | undefined
    }
  | { readonly _tag: "StateMethod"; readonly method: StateMethod; readonly scope: string; readonly jobOrderId: string; readonly comment: string | undefined }
  | { readonly _tag: "ResponseByOrder"; readonly scope: string; readonly jobOrderId: string }
  | {
      readonly _tag: "ResponsesByState"
      readonly scope: string
      readonly state: StateName
      readonly cursor: string
      readonly pageSize: number | undefined
    }
  | ConfigCommand

const isJobOrderMethod = (method: Method): method is JobOrderMethod => methodPayload[method] === "JobOrder"

const parseMethod = (method: Method, scope: string, data: unknown): Result.Result<Command, BadRequest> =>
  Result.gen(function* () {
    const payload = yield* payloadObject(data)
    const comment = yield* readComment(payload)
    if (!isJobOrderMethod(method)) {
      return { _tag: "StateMethod", method, scope, jobOrderId: yield* readId(payload, "JobOrderID"), comment } as const
    }
    if (payload["JobOrder"] === undefined || payload["JobOrder"] === null) return yield* missing("JobOrder is required")
    const jobOrder = yield* Result.mapError(asJobOrder(payload["JobOrder"]), (e) => new BadRequest({ kind: "MalformedPayload", message: e.message }))
    yield* asId(jobOrder.JobOrderID, "JobOrder.JobOrderID")
    yield* ensureJson(jobOrder, "JobOrder")
    const references = yield* referencesOf(jobOrder)
    return { _tag: "JobOrderMethod", method, scope, jobOrder, references, comment } as const
  })

/**
 * The state a query asks for: a normalized name (`Ended_Completed`) or the OPC UA form, a list
 * of ISA95StateDataType (main state first, then the substate), read by their texts.
 */
const stateOf = (value: unknown): Result.Result<StateName, BadRequest> => {
  let name: string
  if (typeof value === "string") name = value
  else if (Array.isArray(value) && value.length > 0 && value.every((s) => isObject(s) && isObject(s["StateText"]) && typeof s["StateText"]["Text"] === "string")) {
    name = value.map((s) => (s as { StateText: { Text: string } }).StateText.Text).join("_")
  } else return malformed("JobOrderState must be a state name or a list of {StateText: {Text}, StateNumber}")
  return Result.match(fromNormalizedName(name), {
    onFailure: () => malformed(`JobOrderState '${name}' is not a job state`),
    onSuccess: (state) => Result.succeed(normalizedName(state))
  })
}

const parseQuery = (query: Query, scope: string, data: unknown): Result.Result<Command, BadRequest> =>
  Result.gen(function* () {
    const payload = yield* payloadObject(data)
    if (query === "RequestJobResponseByJobOrderID") {
      return { _tag: "ResponseByOrder", scope, jobOrderId: yield* readId(payload, "JobOrderID") } as const
    }
    const requested = payload["JobOrderState"] ?? payload["JobState"]
    if (requested === undefined || requested === null) return yield* missing("JobOrderState is required")
    const state = yield* stateOf(requested)
    const cursor = payload["Cursor"] ?? "0"
    if (typeof cursor !== "string" || !/^\d+$/.test(cursor)) return yield* malformed("Cursor must be a decimal string, as returned in NextCursor")
    const pageSize = yield* readCount(payload, "PageSize", { min: 1, max: MAX_PAGE_SIZE })
    return { _tag: "ResponsesByState", scope, state, cursor, pageSize } as const
  })

/** A parsed request and the type its reply carries. */
export interface ParsedRequest {
  readonly replyType: string
  readonly command: Result.Result<Command, BadRequest>
}

/**
 * Parses a request. Pure: an unknown type, a missing subject or a malformed payload is a
 * {@link BadRequest} before anything touches the store.
 */
export const parseRequest = (request: JobControlRequest): ParsedRequest | undefined => {
  const job = parseRequestType(request.type)
  const config = parseConfigType(request.type)
  if (Option.isNone(job) && Option.isNone(config)) return undefined
  const replyType = replyTypeOf(request.type)
  const scope = scopeOf(request.subject)
  if (scope === undefined) {
    return { replyType, command: Result.fail(new BadRequest({ kind: "MissingSubject", message: "the subject must name the scope" })) }
  }
  const scopeProblem = asId(scope, "subject scope")
  if (Result.isFailure(scopeProblem)) return { replyType, command: Result.fail(scopeProblem.failure) }
  if (Option.isSome(config)) return { replyType, command: parseConfigCommand(config.value, scope, request.data, request.extensions) }
  if (Option.isNone(job)) return undefined // unreachable: one of the two matched above
  const kind = job.value
  return {
    replyType,
    command: kind.kind === "method" ? parseMethod(kind.method, scope, request.data) : parseQuery(kind.query, scope, request.data)
  }
}

// The parse of each request object, kept while the object lives: the MQTT ingress parses a
// request to refuse bad input before its dedupe claim, and `JobControl.handle` then finds that
// parse instead of reading the payload (and serialising the job order) a second time.
const parsedRequests = new WeakMap<JobControlRequest, ParsedRequest | undefined>()

/** {@link parseRequest}, once per request object (requests are immutable values). */
export const parsedRequest = (request: JobControlRequest): ParsedRequest | undefined => {
  if (parsedRequests.has(request)) return parsedRequests.get(request)
  const parsed = parseRequest(request)
  parsedRequests.set(request, parsed)
  return parsed
}

/**
 * The job order a command would create when it is a Store or StoreAndStart: the claim of its
 * request can read that job order's admission (and whether its work masters are listed) in the
 * same round trip (`exactlyOnce`'s `admitJobOrder`), and the store method then uses those reads
 * instead of its own.
 */
export const admissionTarget = (command: Command): AdmissionTarget | undefined =>
  command._tag === "JobOrderMethod" && command.method !== "Update"
    ? { id: command.jobOrder.JobOrderID, scope: command.scope, workMasters: command.references.workMasters }
    : undefined
