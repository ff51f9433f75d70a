import { documentIndexedFamily, type IndexedFamily } from "@microdcs/store"
import { ticketKeys } from "./TicketKeys.js"
import { repairTicket } from "./TicketScripts.js"

/**
 * The tickets for index maintenance: each ticket hash implies its member (scored by severity) in
 * the scope's list and its member in the set of its status. `check` reports what disagrees, and
 * `rebuild` runs `repair-ticket-3.lua`, which re-checks the version and scope it was judged from.
 */
export const ticketIndexedFamily = documentIndexedFamily({
  name: "ticket",
  keyFamilies: ticketKeys,
  document: "ticket",
  fields: ["status", "severity"],
  indexes: {
    ticketList: { type: "zset", belongsWhen: (parts) => [["scope", parts["scope"] ?? ""]] },
    ticketByStatus: { type: "set", belongsWhen: (parts) => [["scope", parts["scope"] ?? ""], ["status", parts["status"] ?? ""]] }
  },
  entriesOf: (ticket) => {
    const severity = ticket.fields["severity"]
    return [
      // No stored severity: any score stands (Number(null) would be 0).
      { index: "ticketList", parts: { scope: ticket.scope }, score: severity == null ? undefined : Number(severity) },
      { index: "ticketByStatus", parts: { scope: ticket.scope, status: ticket.fields["status"] ?? "" } }
    ]
  },
  repair: ({ valkey, document, entries }) => {
    const [list, status] = entries
    return valkey.script(
      repairTicket,
      { doc: document.key, list: list!.key, status: status!.key },
      { id: document.id, version: document.version, scope: document.scope, severity: list!.score ?? 0 }
    )
  }
})

/** What `MICRODCS_EXTENSIONS` loads: the admin CLI's `index check|rebuild` walk these after the core families. */
export const indexedFamilies: ReadonlyArray<IndexedFamily> = [ticketIndexedFamily]
