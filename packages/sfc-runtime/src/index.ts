// The runtime of the SFC engine over the store and the poller: a loop per process runs the pure
// core of `@microdcs/sfc` (`start`, `stepAll`) against Valkey, a tick at a time, dispatches commands, ingests events, sweeps
// timers, works the outbox and writes the execution log.
export * from "./EngineOptions.js"
export * from "./StationPort.js"
export * from "./CounterSource.js"
export * from "./OutboxCodec.js"
export * from "./Executions.js"
export * from "./JobOrderTransitions.js"
export * from "./StartJob.js"
export * from "./EventIngestion.js"
export * from "./TimerSweep.js"
export * from "./Reconcile.js"
export * from "./SfcEngine.js"
export * from "./InProcessStation.js"
export * from "./RecipeSnapshots.js"
export { CommandDispatch, type DirectSender, type DirectSendOutcome } from "./CommandDispatch.js"
export { executionLogDroppedCounter, type ExecutionLogSettings, type ExecutionLogStats, ExecutionLogWriter } from "./ExecutionLogWriter.js"
export { engineInboxFullCounter } from "./ApplyLoop.js"
