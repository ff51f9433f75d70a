import { defineKeyFamilies } from "@microdcs/keyschema"

/** The statuses a maintenance ticket moves through; the by-status key part takes only these. */
export const ticketStatuses = ["open", "assigned", "closed"] as const
export type TicketStatus = (typeof ticketStatuses)[number]

/**
 * The key families of maintenance tickets (after the island's `{prefix}:`), in the style of the
 * core ones: the document is addressed by its id alone (its scope is a stored field, and never
 * changes), its indexes by scope. `ticket:` is no core family, so the schema accepts them.
 */
export const ticketKeys = defineKeyFamilies({
  /** hash: v, scope, status, severity, op, doc */
  ticket: "ticket:{id}",
  /** zset: ticket ids of a scope, score = severity (1 most urgent) */
  ticketList: "ticket:list:{scope}",
  /** set: ticket ids of a scope in one status */
  ticketByStatus: { template: "ticket:bystatus:{scope}:{status}", parts: { status: { oneOf: ticketStatuses } } }
})
