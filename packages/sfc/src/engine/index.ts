// The pure engine core: the execution state, the outbox entries it asks for, `start` and `step`.
// The recipe index and the held-command checks are the engine's (and the runtime's) own.
export * from "./ExecutionState.js"
export * from "./ExecutionLog.js"
export * from "./Outbox.js"
export * from "./Correlation.js"
export * from "./Engine.js"
export type { CounterNeed, CounterValues } from "./TransitionCounters.js"
