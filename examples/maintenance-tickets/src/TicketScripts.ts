import { decodeRepairReply, decodeWriteReply, defineScript } from "@microdcs/lua-scripts"

/**
 * The ticket's scripts, one `.lua` file each in `../lua/` (shipped in the package's `files`).
 * The key count is in each file name; `defineScript` refuses key names that disagree with it.
 */
const lua = new URL("../lua/", import.meta.url)

/** The arguments every document write script takes (what `makeDocumentDao` builds). */
interface WriteArgs {
  readonly expectedVersion: number
  readonly scope: string
  readonly id: string
  readonly op: string
  readonly change: string
  readonly nudgeChannel: string
}

export const putTicket = defineScript({
  file: "put-ticket-6.lua",
  dir: lua,
  keys: ["doc", "list", "status", "oldStatus", "scopes", "changes"],
  encodeArgs: (a: WriteArgs & { doc: string; status: string; readStatus: string; severity: number }) => [
    a.expectedVersion, a.scope, a.id, a.op, a.change, a.nudgeChannel, a.doc, a.status, a.readStatus, a.severity
  ],
  decodeReply: decodeWriteReply("put-ticket", ["ok", "conflict", "scope", "retry", "wrongtype"])
})

export const deleteTicket = defineScript({
  file: "delete-ticket-5.lua",
  dir: lua,
  keys: ["doc", "list", "status", "scopes", "changes"],
  encodeArgs: (a: WriteArgs & { readStatus: string }) => [a.expectedVersion, a.scope, a.id, a.op, a.change, a.nudgeChannel, a.readStatus],
  decodeReply: decodeWriteReply("delete-ticket", ["ok", "notfound", "conflict", "retry", "wrongtype"])
})

export const setTicketStatus = defineScript({
  file: "set-ticket-status-4.lua",
  dir: lua,
  keys: ["doc", "from", "to", "changes"],
  encodeArgs: (a: WriteArgs & { readStatus: string; status: string }) => [
    a.expectedVersion, a.scope, a.id, a.op, a.change, a.nudgeChannel, a.readStatus, a.status
  ],
  decodeReply: decodeWriteReply("set-ticket-status", ["ok", "notfound", "conflict", "retry", "wrongtype"])
})

export const repairTicket = defineScript({
  file: "repair-ticket-3.lua",
  dir: lua,
  keys: ["doc", "list", "status"],
  encodeArgs: (a: { id: string; version: string; scope: string; severity: number }) => [a.id, a.version, a.scope, a.severity],
  decodeReply: decodeRepairReply("repair-ticket")
})

/** Every script of the extension, for the header check in its tests. */
export const ticketScripts = [putTicket, deleteTicket, setTicketStatus, repairTicket] as const
