import type { DeleteDocumentArgs } from "./JobOrderScripts.js"
import { defineScript } from "./ScriptDescriptor.js"
import { decodeWriteReply } from "./WriteReply.js"

export interface PutWorkMasterArgs {
  readonly expectedVersion: number
  readonly scope: string
  readonly id: string
  readonly doc: string
  readonly op: string
  readonly change: string
  readonly nudgeChannel: string
}

export const putWorkMaster = defineScript({
  file: "put-workmaster-4.lua",
  keys: ["doc", "list", "scopes", "changes"],
  encodeArgs: (a: PutWorkMasterArgs) => [a.expectedVersion, a.scope, a.id, a.doc, a.op, a.change, a.nudgeChannel],
  decodeReply: decodeWriteReply("put-workmaster", ["ok", "conflict", "scope", "wrongtype"])
})

export const deleteWorkMaster = defineScript({
  file: "delete-workmaster-4.lua",
  keys: ["doc", "list", "scopes", "changes"],
  encodeArgs: (a: DeleteDocumentArgs) => [a.expectedVersion, a.scope, a.id, a.op, a.change, a.nudgeChannel],
  decodeReply: decodeWriteReply("delete-workmaster", ["ok", "notfound", "conflict", "retry", "wrongtype"])
})
