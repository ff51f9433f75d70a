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
// Recipe digests (canonical JSON, SHA-256), pinning (RECIPE_DIGESTS) and the catalogue per scope.
export { parseRecipePins, pinProblem, type RecipePins, workMasterDigest, type WorkMasterDigest } from "./RecipeDigests.js"
export { type CatalogueRecipe, recipeCatalogue } from "./RecipeCatalogue.js"
// A scope's job orders page by page with their documents (one round trip per batch), by state, with a cursor.
export * from "./JobOrderListing.js"
// The processor and its options (checked when the layer is built).
export { type JobControlSettings, defaultJobControlSettings, JobControlOptions } from "./JobControlOptions.js"
export * from "./JobControl.js"
// The exactly-once combinator and the claim holder whose liveness lets a dead one's claims be taken over.
export * from "./Dedupe.js"
export * from "./DoneInWrite.js"
export * from "./ClaimHolder.js"
// Triggers: matching and job order ids (pure), the in-memory catalog, the starts, the config event.
export * from "./TriggerMatch.js"
export * from "./TriggerCatalog.js"
export * from "./TriggerStarts.js"
export { type TriggerChange, TriggerChangeAnnouncer, TRIGGER_CONFIG_EVENT_TYPE } from "./TriggerConfigEvent.js"
export * from "./TriggerEditRelay.js"
