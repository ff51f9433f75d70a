import { Schema } from "effect"

/** Any JSON object (an action's `Parameters`): one definition, so the JSON Schema names it once. */
export const JsonObject = Schema.Record(Schema.String, Schema.Unknown).annotate({ identifier: "object" })
