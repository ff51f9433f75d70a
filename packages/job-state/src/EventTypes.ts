import { Option } from "effect"
import { isInternal, type Method, triggers } from "./Transitions.js"

/**
 * The CloudEvent `type` of every job control request an MES sends: the methods
 * under the ISA-95 job control namespace (v2), the two queries under Machinery Jobs (v1). Run and
 * Complete are internal triggers and have no event type: an MES cannot call them.
 */

/** The MES-callable methods, in table order. */
export const methods: ReadonlyArray<Method> = triggers.filter((t): t is Method => !isInternal(t))

export const queries = ["RequestJobResponseByJobOrderID", "RequestJobResponseByJobOrderState"] as const
export type Query = (typeof queries)[number]

export type MethodEventType<M extends Method = Method> = `org.opcfoundation.ISA95-JOBCONTROL_V2.${M}.v2`
export type QueryEventType<Q extends Query = Query> = `org.opcfoundation.Machinery.Jobs.${Q}.v1`

export const methodEventType = <M extends Method>(method: M): MethodEventType<M> =>
  `org.opcfoundation.ISA95-JOBCONTROL_V2.${method}.v2`

export const queryEventType = <Q extends Query>(query: Q): QueryEventType<Q> => `org.opcfoundation.Machinery.Jobs.${query}.v1`

/** `MethodEventTypes.Store === "org.opcfoundation.ISA95-JOBCONTROL_V2.Store.v2"`. */
export const MethodEventTypes = Object.freeze(Object.fromEntries(methods.map((m) => [m, methodEventType(m)]))) as {
  readonly [M in Method]: MethodEventType<M>
}

export const QueryEventTypes = Object.freeze(Object.fromEntries(queries.map((q) => [q, queryEventType(q)]))) as {
  readonly [Q in Query]: QueryEventType<Q>
}

/**
 * What a method's `data` carries: a whole `JobOrder`, or a `JobOrderID` (with an optional
 * `Comment`). Keyed by Method, so a method added to the table without a payload does not compile.
 */
export const methodPayload: { readonly [M in Method]: "JobOrder" | "JobOrderID" } = {
  Store: "JobOrder",
  StoreAndStart: "JobOrder",
  Update: "JobOrder",
  Start: "JobOrderID",
  RevokeStart: "JobOrderID",
  Pause: "JobOrderID",
  Resume: "JobOrderID",
  Stop: "JobOrderID",
  Abort: "JobOrderID",
  Cancel: "JobOrderID",
  Clear: "JobOrderID"
}

export type JobControlRequest =
  | { readonly kind: "method"; readonly method: Method }
  | { readonly kind: "query"; readonly query: Query }

const byType: ReadonlyMap<string, JobControlRequest> = new Map<string, JobControlRequest>([
  ...methods.map((method) => [methodEventType(method), { kind: "method", method }] as const),
  ...queries.map((query) => [queryEventType(query), { kind: "query", query }] as const)
])

/**
 * The method or query a CloudEvent `type` names; None for any other type (exact match: a wrong
 * version or namespace is not a job control request).
 */
export const parseRequestType = (type: string): Option.Option<JobControlRequest> => Option.fromNullishOr(byType.get(type))

/**
 * The status event every job order transition emits: the job-control ingress for
 * MES methods, the publisher for the engine's internal Run, Complete and Abort.
 */
export const JOB_ORDER_STATUS_EVENT_TYPE = "org.opcfoundation.ISA95-JOBCONTROL_V2.ISA95JobOrderStatusEventType.v2"
