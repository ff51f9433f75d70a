import { asArray, asInteger, asText, UnexpectedReply } from "./Reply.js"
import { defineScript } from "./ScriptDescriptor.js"
import { decodeWrongType, type WrongTypeReply } from "./WrongTypeReply.js"

/**
 * The index rebuild's scripts (IndexMaintenance). Each one re-checks, inside
 * the script, what the caller judged from a read, so a rebuild can run while the island is live.
 */

/** Reply of the per-document repair scripts. */
export type RepairReply =
  | { readonly status: "ok"; readonly fixes: number }
  | { readonly status: "gone" }
  | { readonly status: "retry"; readonly stored: string }
  | WrongTypeReply

/**
 * The decoder of a repair script's reply (`ok` with the number of fixes, `gone`, `retry` with the
 * stored version, `wrongtype`): the core repair scripts use it, and so can an extension's.
 */
export const decodeRepairReply =
  (script: string) =>
  (raw: unknown): RepairReply => {
    const reply = asArray(script, raw)
    const status = asText(script, reply[0])
    switch (status) {
      case "ok":
        return { status, fixes: asInteger(script, reply[1]) }
      case "gone":
        return { status }
      case "retry":
        return { status, stored: reply[1] == null ? "" : asText(script, reply[1]) }
      case "wrongtype":
        return decodeWrongType(script, reply)
      default:
        throw new UnexpectedReply(script, raw)
    }
  }

export interface RepairJobOrderArgs {
  readonly id: string
  /** The `v` field as read. */
  readonly version: string
  readonly scope: string
  /** The `priority` field as read; "" when it has none. The script re-checks it. */
  readonly priority: string
  /** The list score computed from it; "" = unknown (keep an existing score, else 0). */
  readonly score: string
  readonly nudgeChannel: string
}

export const repairJobOrder = defineScript({
  file: "repair-joborder-3.lua",
  keys: ["doc", "list", "scopes"],
  encodeArgs: (a: RepairJobOrderArgs) => [a.id, a.version, a.scope, a.priority, a.score, a.nudgeChannel],
  decodeReply: decodeRepairReply("repair-joborder")
})

export interface RepairJobResponseArgs {
  readonly id: string
  readonly version: string
  readonly scope: string
  /** "" = not indexed by state (the `state` slot then holds the document key). */
  readonly state: string
  /** "" = no job order (the `order` slot then holds the document key). */
  readonly orderId: string
  /** The `start` field as read; "" when the document predates it. */
  readonly start: string
  /** The id the by-order pointer named when read; "" = no pointer. */
  readonly pointerId: string
  /** The list score computed from the read; "" = unknown (keep an existing score, else 0). */
  readonly score: string
  readonly nudgeChannel: string
}

export const repairJobResponse = defineScript({
  file: "repair-jobresponse-7.lua",
  /** `responses`: the `jobresponse:oforder:{o}` set of the order (the document key when there is none). */
  keys: ["doc", "list", "state", "order", "pointed", "scopes", "responses"],
  encodeArgs: (a: RepairJobResponseArgs) => [
    a.id, a.version, a.scope, a.state, a.orderId, a.start, a.pointerId, a.score, a.nudgeChannel
  ],
  decodeReply: decodeRepairReply("repair-jobresponse")
})

export interface RepairWorkMasterArgs {
  readonly id: string
  readonly version: string
  readonly scope: string
  readonly nudgeChannel: string
}

export const repairWorkMaster = defineScript({
  file: "repair-workmaster-3.lua",
  keys: ["doc", "list", "scopes"],
  encodeArgs: (a: RepairWorkMasterArgs) => [a.id, a.version, a.scope, a.nudgeChannel],
  decodeReply: decodeRepairReply("repair-workmaster")
})

/** Reply of the scripts that remove a stale index entry. */
export type RemoveEntryReply =
  | { readonly status: "removed"; readonly count: number }
  | { readonly status: "kept" }
  | { readonly status: "retry"; readonly current: string }
  | WrongTypeReply

const decodeRemove =
  (script: string) =>
  (raw: unknown): RemoveEntryReply => {
    const reply = asArray(script, raw)
    const status = asText(script, reply[0])
    switch (status) {
      case "removed":
        return { status, count: asInteger(script, reply[1]) }
      case "kept":
        return { status }
      case "retry":
        return { status, current: asText(script, reply[1]) }
      case "wrongtype":
        return decodeWrongType(script, reply)
      default:
        throw new UnexpectedReply(script, raw)
    }
  }

export interface RemoveIndexMemberArgs {
  readonly id: string
  readonly indexType: "set" | "zset"
  /** Only a persistent document belongs (job order list: a retired job order has a TTL). */
  readonly persistentOnly: boolean
  /** Fields the document must hold, with their values, to belong. */
  readonly belongsWhen: ReadonlyArray<readonly [field: string, value: string]>
}

export const removeIndexMember = defineScript({
  file: "remove-index-member-2.lua",
  keys: ["index", "doc"],
  encodeArgs: (a: RemoveIndexMemberArgs) => [a.id, a.indexType, a.persistentOnly ? "1" : "0", ...a.belongsWhen.flat()],
  decodeReply: decodeRemove("remove-index-member")
})

export interface RemoveOrderPointerArgs {
  readonly orderId: string
  /** The id the pointer named when read. */
  readonly pointerId: string
}

export const removeOrderPointer = defineScript({
  file: "remove-order-pointer-2.lua",
  keys: ["pointer", "doc"],
  encodeArgs: (a: RemoveOrderPointerArgs) => [a.orderId, a.pointerId],
  decodeReply: decodeRemove("remove-order-pointer")
})

export type DeleteWrongTypeReply = { readonly status: "deleted" | "kept"; readonly actual: string }

export const deleteWrongType = defineScript({
  file: "delete-wrong-type-1.lua",
  keys: ["key"],
  encodeArgs: (a: { readonly expectedType: string }) => [a.expectedType],
  decodeReply: (raw): DeleteWrongTypeReply => {
    const reply = asArray("delete-wrong-type", raw)
    const status = asText("delete-wrong-type", reply[0])
    if (status !== "deleted" && status !== "kept") throw new UnexpectedReply("delete-wrong-type", raw)
    return { status, actual: asText("delete-wrong-type", reply[1]) }
  }
})

export type RegisterScopeReply = { readonly status: "ok"; readonly added: number } | WrongTypeReply

export const registerScope = defineScript({
  file: "register-scope-1.lua",
  keys: ["scopes"],
  encodeArgs: (a: { readonly scope: string; readonly nudgeChannel: string }) => [a.scope, a.nudgeChannel],
  decodeReply: (raw): RegisterScopeReply => {
    const reply = asArray("register-scope", raw)
    const status = asText("register-scope", reply[0])
    if (status === "ok") return { status, added: asInteger("register-scope", reply[1]) }
    if (status === "wrongtype") return decodeWrongType("register-scope", reply)
    throw new UnexpectedReply("register-scope", raw)
  }
})

export interface RepairJobResponseFailedArgs {
  readonly id: string
  readonly version: string
  readonly scope: string
  /** The failed-set score computed from the read; "" = unknown (keep an existing score, else the stored end time). */
  readonly score: string
}

/**
 * Sets a job response's membership in its scope's `jobresponse:failed:{scope}` set: Aborted with
 * its job order listed (live) in the scope puts it there, anything else takes it out.
 */
export const repairJobResponseFailed = defineScript({
  file: "repair-jobresponse-failed-3.lua",
  keys: ["doc", "failed", "orders"],
  encodeArgs: (a: RepairJobResponseFailedArgs) => [a.id, a.version, a.scope, a.score],
  decodeReply: decodeRepairReply("repair-jobresponse-failed")
})
