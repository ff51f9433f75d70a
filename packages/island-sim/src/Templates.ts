import { isObject, placeholderOf } from "./InputReaders.js"

/**
 * Scripted data with placeholders: a string that is exactly `{{name}}` becomes the value of
 * `name` for the command or event at hand (`{"done": "{{action}}", "at": "{{now}}"}`). A
 * placeholder inside a longer text stays as written.
 */

/** What a reply's data may name. */
export const REPLY_PLACEHOLDERS = ["jobid", "action", "scope", "type", "attempt", "correlationid", "now"] as const
/** What an event's data may name. */
export const EVENT_PLACEHOLDERS = ["jobid", "scope", "type", "now"] as const

export type TemplateValues = Readonly<Record<string, string | undefined>>

/** `value` with every known placeholder replaced; `now` is the current time (RFC 3339). */
export const fillTemplate = (value: unknown, values: TemplateValues): unknown => {
  if (typeof value === "string") {
    const name = placeholderOf(value)
    if (name === undefined) return value
    return name === "now" ? new Date().toISOString() : (values[name] ?? null)
  }
  if (Array.isArray(value)) return value.map((item) => fillTemplate(item, values))
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillTemplate(item, values)]))
  return value
}
