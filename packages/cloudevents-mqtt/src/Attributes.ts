import { type CloudEvent, isUuid } from "./CloudEvent.js"
import { mqttStringProblem } from "./MqttString.js"

/**
 * Attribute rules shared by encode and decode: what a name may be, what a value may hold, and which
 * names are the context attributes rather than extensions.
 */

/** Context attributes that travel as user properties under their own names. */
export const CONTEXT_ATTRIBUTES = ["specversion", "id", "source", "type", "subject", "time", "dataschema"] as const
/** Names an extension may not take: the context attributes, and those mapped to MQTT properties or the payload. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([...CONTEXT_ATTRIBUTES, "datacontenttype", "data", "data_base64"])

/** CloudEvents attribute names: lower-case ASCII letters and digits. */
export const isAttributeName = (name: string): boolean => /^[a-z0-9]+$/.test(name)

// RFC 3339 date-time; Date.parse then rejects impossible dates such as month 13.
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
export const isRfc3339 = (text: string): boolean => RFC3339.test(text) && !Number.isNaN(Date.parse(text))

/** The first problem with an event's attributes (not its correlation id, not its data), if any. */
export const attributeProblem = (event: CloudEvent): string | undefined => {
  if (event.specversion !== "1.0") return `specversion must be "1.0", not ${JSON.stringify(event.specversion)}`
  for (const name of ["id", "source", "type"] as const) {
    const value: unknown = event[name]
    if (typeof value !== "string" || value.length === 0) return `${name} is required`
  }
  for (const name of [...CONTEXT_ATTRIBUTES, "datacontenttype"] as const) {
    const value: unknown = event[name]
    if (value === undefined) continue
    if (typeof value !== "string") return `${name} must be a string`
    const problem = mqttStringProblem(value)
    if (problem) return `${name} ${problem}`
  }
  if (event.time !== undefined && !isRfc3339(event.time)) return `time is not RFC 3339: ${event.time}`
  for (const [name, value] of Object.entries(event.extensions)) {
    if (!isAttributeName(name)) return `extension name '${name}' is not lower-case letters and digits`
    if (RESERVED_NAMES.has(name)) return `extension name '${name}' is reserved`
    if (typeof value !== "string") return `extension ${name} must be a string`
    const problem = mqttStringProblem(value)
    if (problem) return `extension ${name} ${problem}`
  }
  return undefined
}

/** The problem with a correlation id, if any: it travels as 16 raw bytes, so it must be a UUID. */
export const correlationProblem = (correlationid: string | undefined): string | undefined =>
  correlationid === undefined || isUuid(correlationid) ? undefined : `correlationid is not a UUID: ${correlationid}`
