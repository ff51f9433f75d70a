import { resolutions } from "@microdcs/journal"
import type { JsonObject } from "../Json.js"
import { arrayOf, closedObject, integer, object, problemTexts, returnStatus, text } from "./Common.js"

/**
 * A journal's configuration (`...config.journal.v1`): which events a scope's journal records,
 * by which search keys, for how long, and the rolling counters over them. The parser refuses
 * any field it does not know, so the schema is closed.
 */

const name = (description: string): JsonObject =>
  text(`${description} A letter, then letters, digits, \`_\`, \`.\`, \`-\`; at most 64.`, { pattern: "^[A-Za-z][A-Za-z0-9_.-]{0,63}$" })

const path = (description: string): JsonObject =>
  text(`${description} Segments separated by \`.\` (\`data.tool_id\`, \`subject\`, an extension attribute, \`data.results.0\`).`, {
    minLength: 1,
    maxLength: 256,
    pattern: "^[^.]+(\\.[^.]+)*$"
  })

const duration = (description: string): JsonObject => ({
  description: `${description} A text such as \`90s\`, \`15m\`, \`1h\`, \`7d\`, or milliseconds.`,
  anyOf: [{ type: "string", pattern: "^\\s*\\d{1,12}(ms|s|m|h|d)\\s*$" }, integer("Milliseconds.", { minimum: 1, maximum: Number.MAX_SAFE_INTEGER })]
})

const counter: JsonObject = closedObject(
  {
    name: name("The counter's name, unique in the scope (recipe conditions read `counter.{name}`)."),
    searchKey: text("The search key it counts by (one of the journal's)."),
    window: duration("How far back it counts; at least its resolution."),
    resolution: { enum: Object.keys(resolutions), description: "The size of its buckets; default minute." },
    sum: path("Sums the number at this path instead of counting entries."),
    when: text("A condition on the event (the recipe condition language); only entries it holds for count.", { minLength: 1 })
  },
  ["name", "searchKey", "window"]
)

export const journalConfigSchema: JsonObject = closedObject(
  {
    name: name("The journal's name."),
    types: arrayOf(text("A CloudEvent type it records.", { minLength: 1 }), { minItems: 1, uniqueItems: true }),
    searchKeys: arrayOf(closedObject({ name: name("The search key's name."), path: path("Where its value is in the event.") }, ["name", "path"])),
    retention: closedObject(
      { maxAge: duration("Entries older than this (by their reference time) are swept."), reference: { enum: ["event", "arrival"], description: "Default event." } },
      ["maxAge"]
    ),
    compression: { enum: ["none", "lz4"], description: "Default none." },
    counters: arrayOf(counter)
  },
  ["name", "types", "retention"],
  { description: "A journal of the scope to store (PUT); every problem is listed in the refusal." }
)

export const journalConfigDeleteSchema: JsonObject = object({ name: text("The journal to remove.", { minLength: 1 }) }, ["name"], { description: "A journal to remove (DELETE)." })

export const journalConfigReplySchema: JsonObject = closedObject(
  {
    ReturnStatus: returnStatus,
    Journal: { type: "string" },
    Created: { type: "boolean", description: "A PUT made a new journal (false: it replaced one)." },
    Removed: integer("1 when a DELETE removed it, 0 when there was none.", { minimum: 0 }),
    Problems: problemTexts
  },
  ["ReturnStatus"],
  { description: "The reply to a journal configuration." }
)
