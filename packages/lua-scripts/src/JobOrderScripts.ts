import { defineScript } from "./ScriptDescriptor.js"
import { decodeWriteReply } from "./WriteReply.js"

export interface PutJobOrderArgs {
  readonly expectedVersion: number
  readonly scope: string
  readonly id: string
  readonly priority: number
  readonly doc: string
  readonly op: string
  readonly change: string
  readonly nudgeChannel: string
  /** 0 = no limit. */
  readonly limit: number
  /** 0 = keep listed; > 0 = unlist and expire the document after this many ms. */
  readonly retainMs: number
}

export const putJobOrder = defineScript({
  file: "put-joborder-4.lua",
  keys: ["doc", "list", "scopes", "changes"],
  encodeArgs: (a: PutJobOrderArgs) => [
    a.expectedVersion, a.scope, a.id, a.priority, a.doc, a.op, a.change, a.nudgeChannel, a.limit, a.retainMs
  ],
  decodeReply: decodeWriteReply("put-joborder", ["ok", "conflict", "scope", "limit", "wrongtype"])
})

export interface DeleteDocumentArgs {
  readonly expectedVersion: number
  readonly scope: string
  readonly id: string
  readonly op: string
  readonly change: string
  readonly nudgeChannel: string
}

export const deleteJobOrder = defineScript({
  file: "delete-joborder-4.lua",
  keys: ["doc", "list", "scopes", "changes"],
  encodeArgs: (a: DeleteDocumentArgs) => [a.expectedVersion, a.scope, a.id, a.op, a.change, a.nudgeChannel],
  decodeReply: decodeWriteReply("delete-joborder", ["ok", "notfound", "conflict", "retry", "wrongtype"])
})
