// Values in and out of the processor.
export * from "./Request.js"
export { BadRequest, type BadRequestKind } from "./Payload.js"
// Parsing (pure): a request to a command, station configuration, a job order's references.
export { type JobOrderReferences, referencesOf } from "./References.js"
export {
  type ConfigAction,
  type ConfigCommand,
  configEventType,
  type ConfigEventType,
  ConfigEventTypes,
  type ConfigKind,
  configKinds,
  referenceIdField
} from "./ConfigCommand.js"
export * from "./Command.js"
// The processor and its options (checked when the layer is built).
export { type JobControlSettings, defaultJobControlSettings, JobControlOptions } from "./JobControlOptions.js"
export * from "./JobControl.js"
// The exactly-once combinator.
export * from "./Dedupe.js"
