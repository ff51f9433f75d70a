import { Schema } from "effect"
import { JOB_RESPONSE_SCHEMA_ID, JOB_RESPONSE_V1_SCHEMA_ID, JobResponse, JobResponseV1 } from "./JobResponseModel.js"

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonSchemaDocument = { readonly [key: string]: Json }

const documentOf = (schema: Schema.Top, head: { readonly $id: string; readonly title: string; readonly description: string }): JsonSchemaDocument => {
  const document = Schema.toJsonSchemaDocument(schema)
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    ...head,
    ...(document.schema as JsonSchemaDocument),
    $defs: document.definitions as Json
  }
}

/**
 * The JSON Schema (draft 2020-12) of a job response as the island stores and publishes it, generated
 * from the model the readers decode with, so the two cannot drift. The repository publishes it
 * under its `$id` as `docs/schemas/job-response/v2.0.0/schema.json`.
 */
export const jobResponseJsonSchema = (): JsonSchemaDocument =>
  documentOf(JobResponse, {
    $id: JOB_RESPONSE_SCHEMA_ID,
    title: "Job response v2.0.0",
    description:
      "A finished job's response (OPC 10031-4 ISA95JobResponseDataType in JSON): its final state, the recipe's result data and the resources it ran with."
  })

/** The JSON Schema of the form written before v2 (`docs/schemas/job-response/v1.0.0/schema.json`), read for one release. */
export const jobResponseV1JsonSchema = (): JsonSchemaDocument =>
  documentOf(JobResponseV1, {
    $id: JOB_RESPONSE_V1_SCHEMA_ID,
    title: "Job response v1.0.0",
    description: "A finished job's response in the form the island wrote before v2.0.0: a state name, the result data as one object, the failure as text."
  })
