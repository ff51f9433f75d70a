import { asArray, asInteger, asText, UnexpectedReply } from "./Reply.js"
import { defineScript } from "./ScriptDescriptor.js"
import { decodeWriteReply } from "./WriteReply.js"
import { decodeWrongType, type WrongTypeReply } from "./WrongTypeReply.js"

export interface PutJobResponseArgs {
  readonly expectedVersion: number
  readonly scope: string
  readonly id: string
  /** Normalized state; "" = not indexed by state. */
  readonly state: string
  /** The stored state the caller read ("" = none); the script re-checks it. */
  readonly storedState: string
  readonly orderId: string
  /** The stored job order id the caller read ("" = none); the script re-checks it. */
  readonly storedOrderId: string
  /** Epoch ms; the list score (0 when the response has none). */
  readonly startTime: number
  /** Epoch ms; the score in the scope's failed set while the state is a failure state. */
  readonly endTime: number
  readonly doc: string
  readonly op: string
  readonly change: string
  readonly nudgeChannel: string
}

/**
 * Unused key slots (no new state, no stored state, no stored order) carry the document key:
 * the script decides from the matching ARGV value, which is empty, and never touches the slot.
 * `newResponses`/`oldResponses` are the `jobresponse:oforder:{o}` sets of the new and stored order;
 * `failed` is the scope's `jobresponse:failed:{scope}` set (responses in a failure state by end time).
 */
export const putJobResponse = defineScript({
  file: "put-jobresponse-12.lua",
  keys: ["doc", "list", "newState", "oldState", "newOrder", "oldOrder", "scopes", "changes", "newResponses", "oldResponses", "failed", "orders"],
  encodeArgs: (a: PutJobResponseArgs) => [
    a.expectedVersion, a.scope, a.id, a.state, a.storedState, a.orderId, a.storedOrderId, a.startTime, a.doc, a.op, a.change,
    a.nudgeChannel, a.endTime
  ],
  decodeReply: decodeWriteReply("put-jobresponse", ["ok", "conflict", "scope", "retry", "wrongtype"])
})

export interface DeleteJobResponseArgs {
  readonly expectedVersion: number
  /** Scope, state and job order id as the caller read them; the script re-checks all three. */
  readonly scope: string
  readonly state: string
  readonly orderId: string
  readonly id: string
  readonly op: string
  readonly change: string
  readonly nudgeChannel: string
}

export const deleteJobResponse = defineScript({
  file: "delete-jobresponse-8.lua",
  keys: ["doc", "list", "state", "order", "scopes", "changes", "responses", "failed"],
  encodeArgs: (a: DeleteJobResponseArgs) => [a.expectedVersion, a.scope, a.state, a.orderId, a.id, a.op, a.change, a.nudgeChannel],
  decodeReply: decodeWriteReply("delete-jobresponse", ["ok", "notfound", "conflict", "retry", "wrongtype"])
})

/** A job response document as the by-order lookup returns it. */
export interface FoundJobResponse {
  readonly id: string
  readonly version: number
  readonly scope: string
  readonly state: string
  readonly orderId: string
  readonly op: string
  readonly doc: string
}

export type FindByOrderReply =
  | { readonly status: "ok"; readonly document: FoundJobResponse }
  | { readonly status: "notfound" }
  | WrongTypeReply

const decodeFindByOrder = (raw: unknown): FindByOrderReply => {
  const script = "find-jobresponse-byorder"
  const reply = asArray(script, raw)
  const status = asText(script, reply[0])
  const text = (i: number) => asText(script, reply[i])
  switch (status) {
    case "ok":
      return {
        status,
        document: {
          id: text(1), version: asInteger(script, reply[2]), scope: text(3), state: text(4), orderId: text(5), op: text(6), doc: text(7)
        }
      }
    case "notfound":
      return { status }
    case "wrongtype":
      return decodeWrongType(script, reply)
    default:
      throw new UnexpectedReply(script, raw)
  }
}

export interface FindJobResponseByOrderArgs {
  /** `{prefix}:jobresponse:`, the response key without its id. */
  readonly documentKeyHead: string
  readonly orderId: string
}

/** Read-only: the by-order pointer and the document it names, in one round trip. */
export const findJobResponseByOrder = defineScript({
  file: "find-jobresponse-byorder-1.lua",
  keys: ["byOrder"],
  encodeArgs: (a: FindJobResponseByOrderArgs) => [a.documentKeyHead, a.orderId],
  decodeReply: decodeFindByOrder
})
