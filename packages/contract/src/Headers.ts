import type { JsonObject } from "./Json.js"

/**
 * A message's CloudEvent attributes as MQTT v5 user properties (binary mode): each attribute but
 * `data`, `datacontenttype` (the MQTT Content Type) and `correlationid` (the MQTT Correlation
 * Data) is a user property of the same name. Written as AsyncAPI Schema Objects: the attributes
 * every message has once (`CloudEventAttributes` in `components.schemas`), and per message what
 * it adds.
 */

const nonEmpty = (description: string): JsonObject => ({ type: "string", minLength: 1, description })

/** The name of the shared attributes in `components.schemas`. */
export const CLOUD_EVENT_ATTRIBUTES = "CloudEventAttributes"

export const cloudEventAttributes: JsonObject = {
  type: "object",
  description:
    "The CloudEvent attributes as MQTT v5 user properties (binary mode): each once, as text. `datacontenttype` is the MQTT Content Type and `correlationid` the MQTT Correlation Data; user properties whose names are not lower-case letters and digits are no CloudEvent attributes.",
  properties: {
    specversion: { const: "1.0" },
    id: nonEmpty("The event's id; with `source` it names the event (a repeat is recognised by the pair)."),
    source: nonEmpty("Who sent it (a URI reference)."),
    type: nonEmpty("The event's type."),
    subject: nonEmpty("What it is about."),
    time: { type: "string", format: "date-time", description: "When it happened (RFC 3339)." },
    dataschema: { type: "string", format: "uri", description: "The schema of the data, when the sender names one." }
  },
  required: ["specversion", "id", "source", "type"]
}

/** A CloudEvent type: one exactly, or any (with what it is). */
export type TypeHeader = { readonly exactly: string } | { readonly any: string }

/** Extension attributes a message may carry, by name. */
export const extensions = {
  causationid: nonEmpty("The `id` of the request this answers."),
  mdcserrorkind: nonEmpty("Why the request was refused, a word to branch on (`UnknownJobOrderId`, `InvalidJobOrderStatus`, `MalformedPayload`, ...)."),
  mdcserrormessage: nonEmpty("Why the request was refused, in words."),
  jobid: nonEmpty("The job order the command (or event) belongs to."),
  action: nonEmpty("The recipe action that sent the command."),
  attempt: { type: "string", pattern: "^[1-9][0-9]*$", description: "Which send of the command this is (1, 2, ...): a resend after a timeout is a new event with the same correlation." },
  methodPut: { type: "string", pattern: "^[Pp][Uu][Tt]$", description: "`PUT` (the default when absent; any case): store." },
  methodDelete: { type: "string", pattern: "^[Dd][Ee][Ll][Ee][Tt][Ee]$", description: "`DELETE` (any case): remove." },
  methodAny: { type: "string", pattern: "^([Pp][Uu][Tt]|[Dd][Ee][Ll][Ee][Tt][Ee])$", description: "`PUT` (the default when absent) or `DELETE`, any case." }
} as const satisfies Record<string, JsonObject>

export interface HeaderSpec {
  readonly type: TypeHeader
  /** What the subject is, and whether it must be there. */
  readonly subject?: { readonly description: string; readonly required: boolean }
  /** Extension attributes by their user property name, and which must be there. */
  readonly extensions?: Readonly<Record<string, JsonObject>>
  readonly required?: ReadonlyArray<string>
}

/** The user properties of one message: the shared attributes, and what this message says of them. */
export const cloudEventHeaders = (spec: HeaderSpec): JsonObject => {
  const required = [...(spec.subject?.required === true ? ["subject"] : []), ...(spec.required ?? [])]
  return {
    allOf: [
      { $ref: `#/components/schemas/${CLOUD_EVENT_ATTRIBUTES}` },
      {
        type: "object",
        properties: {
          type: "exactly" in spec.type ? { const: spec.type.exactly } : nonEmpty(spec.type.any),
          ...(spec.subject === undefined ? {} : { subject: nonEmpty(spec.subject.description) }),
          ...spec.extensions
        },
        ...(required.length > 0 ? { required } : {})
      }
    ]
  }
}
