import { JOB_RESPONSE_SCHEMA_ID, JOB_RESPONSE_V1_SCHEMA_ID, jobResponseJsonSchema, jobResponseV1JsonSchema } from "@microdcs/job-state"
import { RECIPE_SCHEMA_ID, RECIPE_SCHEMA_ID_V1_1, recipeJsonSchema } from "@microdcs/sfc"
import type { JsonObject } from "./Json.js"
import { schemaId } from "./SchemaIds.js"
import { jobOrderSchema } from "./schemas/Isa95.js"
import {
  errorReplySchema,
  jobOrderIdRequestSchema,
  jobOrderRequestSchema,
  methodReplySchema,
  responseByIdReplySchema,
  responseByIdRequestSchema,
  responsesByStateReplySchema,
  responsesByStateRequestSchema
} from "./schemas/JobControl.js"
import { journalConfigDeleteSchema, journalConfigReplySchema, journalConfigSchema } from "./schemas/JournalConfig.js"
import {
  jobAcceptanceReplySchema,
  jobAcceptanceSchema,
  referenceConfigReplySchema,
  referenceConfigSchema,
  referenceKinds,
  workMasterDeleteSchema,
  workMasterReplySchema,
  workMasterSchema
} from "./schemas/StationConfig.js"
import {
  metadataSchema,
  orderDocumentSchema,
  stateIndexSchema,
  stationCommandSchema,
  stationEventSchema,
  stationReplySchema,
  statusEventSchema,
  triggerEventSchema
} from "./schemas/Events.js"
import { triggerDeleteSchema, triggerReplySchema, triggerSchema, triggersChangedSchema } from "./schemas/TriggerConfig.js"

/** The versions that are not 1.0.0. A schema gets a new version when what it accepts changes. */
const versions: Readonly<Record<string, string>> = { "job-response": "2.0.0" }

const versionOf = (name: string): string => versions[name] ?? "1.0.0"

/** The `$id` of the contract's schema `name`. */
export const payloadSchemaId = (name: string): string => schemaId(name, versionOf(name))

const jobOrder = payloadSchemaId("job-order")
const jobResponse = JOB_RESPONSE_SCHEMA_ID

/** Every payload schema but the recipe's, by name: its title and the schema itself. */
const written = (): ReadonlyArray<readonly [string, string, JsonObject]> => [
  ["job-order", "Job order", jobOrderSchema],
  ["job-order-request", "Store, StoreAndStart, Update request", jobOrderRequestSchema(jobOrder)],
  ["job-order-id-request", "Start, RevokeStart, Pause, Resume, Stop, Abort, Cancel, Clear request", jobOrderIdRequestSchema],
  ["method-reply", "Job control method reply", methodReplySchema],
  ["job-response-by-id-request", "RequestJobResponseByJobOrderID request", responseByIdRequestSchema],
  ["job-response-by-id-reply", "RequestJobResponseByJobOrderID reply", responseByIdReplySchema(jobResponse)],
  ["job-responses-by-state-request", "RequestJobResponseByJobOrderState request", responsesByStateRequestSchema],
  ["job-responses-by-state-reply", "RequestJobResponseByJobOrderState reply", responsesByStateReplySchema(jobResponse)],
  ["error-reply", "Error reply", errorReplySchema],
  ...referenceKinds.map((kind) => [`config-${kind}`, `Configuration: ${kind}`, referenceConfigSchema(kind)] as const),
  ["config-reference-reply", "Reference list configuration reply", referenceConfigReplySchema],
  ["work-master", "Configuration: work master", workMasterSchema],
  ["work-master-delete", "Configuration: work master removal", workMasterDeleteSchema],
  ["work-master-reply", "Work master configuration reply", workMasterReplySchema],
  ["job-acceptance", "Configuration: job acceptance limit", jobAcceptanceSchema],
  ["job-acceptance-reply", "Job acceptance configuration reply", jobAcceptanceReplySchema],
  ["trigger", "Configuration: trigger", triggerSchema],
  ["trigger-delete", "Configuration: trigger removal", triggerDeleteSchema],
  ["trigger-reply", "Trigger configuration reply", triggerReplySchema],
  ["triggers-changed", "Trigger change announcement", triggersChangedSchema],
  ["journal-config", "Configuration: journal", journalConfigSchema],
  ["journal-config-delete", "Configuration: journal removal", journalConfigDeleteSchema],
  ["journal-config-reply", "Journal configuration reply", journalConfigReplySchema],
  ["job-order-status-event", "Job order status event", statusEventSchema],
  ["order-document", "Retained job order", orderDocumentSchema(jobOrder)],
  ["state-index", "Retained state index page", stateIndexSchema],
  ["island-metadata", "Retained island metadata", metadataSchema],
  ["station-command", "Station push command", stationCommandSchema],
  ["station-reply", "Station reply", stationReplySchema],
  ["station-event", "Station pull event", stationEventSchema],
  ["trigger-event", "Event on an events topic", triggerEventSchema]
]

/** A schema with its draft, `$id` and title in front. */
const published = (name: string, title: string, schema: JsonObject): JsonObject => ({
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: payloadSchemaId(name),
  title: `${title} v${versionOf(name)}`,
  description: schema["description"] ?? title,
  ...schema
})

/**
 * Every payload's JSON Schema (draft 2020-12) by its `$id`: the ones written here from the code's
 * types and values, the recipe's of each version, generated from the recipe model (`recipeJsonSchema`), and the job
 * response's, generated from the model its readers decode with (v2, and v1 that they still read).
 */
export const payloadSchemas = (): Readonly<Record<string, JsonObject>> => ({
  ...Object.fromEntries(written().map(([name, title, schema]) => [payloadSchemaId(name), published(name, title, schema)])),
  [RECIPE_SCHEMA_ID]: recipeJsonSchema() as JsonObject,
  [RECIPE_SCHEMA_ID_V1_1]: recipeJsonSchema("1.1.0") as JsonObject,
  [JOB_RESPONSE_SCHEMA_ID]: jobResponseJsonSchema() as JsonObject,
  [JOB_RESPONSE_V1_SCHEMA_ID]: jobResponseV1JsonSchema() as JsonObject
})
