import { Schema } from "effect"
import { ATTRIBUTE_NAME, FIELD_PATH, MATCHES } from "./correlationKey.js"

/**
 * Where a pull event carries the value that picks its job (v1.1.0): a CloudEvent attribute (an
 * extension such as `lotid`, or `subject`/`source`) or a dot path into the event's data. PascalCase
 * only: the decoded draft (`CorrelationKeyDraft`) also takes snake_case.
 */
export const CorrelationKey = Schema.Union([
  Schema.Struct({ Attribute: Schema.String.check(Schema.isPattern(ATTRIBUTE_NAME, { expected: "a CloudEvent attribute name (a-z, 0-9, at most 20)" })) }).annotate({ identifier: "AttributeKey" }),
  Schema.Struct({ DataField: Schema.String.check(Schema.isPattern(FIELD_PATH, { expected: "a dot path of field names or indexes" })) }).annotate({ identifier: "DataFieldKey" })
]).annotate({ identifier: "CorrelationKey" })
export type CorrelationKey = typeof CorrelationKey.Type

/** `jobid`, `order.<field path>` or `parameter.<ID>`: what the event's key must equal (v1.1.0). */
export const Matches = Schema.String.check(Schema.isPattern(MATCHES, { expected: "jobid, order.<field path> or parameter.<ID>" }))
