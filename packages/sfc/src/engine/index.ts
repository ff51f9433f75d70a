// The pure engine core: the execution state, the outbox entries it asks for, `start` and `step`.
// The recipe index is the engine's own; the held-command checks are exported for the runtime
// (`@microdcs/sfc-runtime`), whose outbox handler holds back and releases commands by them.
export * from "./ExecutionState.js"
export * from "./ExecutionLog.js"
export * from "./Outbox.js"
export * from "./Correlation.js"
export * from "./Engine.js"
export type { CounterNeed, CounterValues } from "./TransitionCounters.js"
export { awaitsSend, isHeld } from "./HeldCommands.js"
