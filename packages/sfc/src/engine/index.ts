// The pure engine core: the execution state, the outbox entries it asks for, `start`, `step` and
// `stepAll`. The recipe index and the core's internals (`stepOnce`, the counter stop) are the
// engine's own; the held-command checks are exported for the runtime (`@microdcs/sfc-runtime`),
// whose outbox handler holds back and releases commands by them.
export * from "./ExecutionState.js"
export * from "./ExecutionLog.js"
export * from "./Outbox.js"
export * from "./Correlation.js"
export { DEFAULT_MAX_ATTEMPTS, type EngineInput, type EngineOutput, start, type StartParams, step } from "./Engine.js"
export { dueOf, indexesOf, type WaitChange } from "./Indexes.js"
export { stepAll, type StepAllOutput } from "./StepAll.js"
export { eventKeyAt, type KeyedEvent } from "./CorrelationKeys.js"
export { everyKeyedWait, type KeyedWait, type KeyedWaitChange, type WaitKey } from "./KeyedWaits.js"
export type { WaitChanges } from "./Waits.js"
export type { CounterNeed, CounterValues } from "./TransitionCounters.js"
export { awaitsSend, isHeld, isStopAfterEnd, sendsOnce } from "./HeldCommands.js"
export type { ActionErrorResult } from "./ActionFailure.js"
// An operator's audited interventions: the inputs, and the typed refusal of one the engine would not apply.
export * from "./InterventionInput.js"
export { interventionRefusal } from "./InterventionPlan.js"
export { InterventionRefused, type InterventionProblem, type InterventionProblemKind } from "./InterventionRefusal.js"
export { COUNTER_RECHECK_MS } from "./Waiting.js"
// v1.1.0 sub-recipes: the child's job id, and the parent's input when the child ends.
export { childEndInput } from "./SubRecipes.js"
export { subRecipeJobId } from "./SubRecipeIds.js"
