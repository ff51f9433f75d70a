// A store extension, as a team would ship one: key families, scripts, a DAO and index maintenance.
export * from "./TicketKeys.js"
export * from "./TicketScripts.js"
export * from "./TicketDao.js"
export * from "./TicketIndexes.js"
