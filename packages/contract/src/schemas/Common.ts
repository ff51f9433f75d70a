import { MAX_KEY_PART_BYTES } from "@microdcs/keyschema"
import { allJobStates, type JobState, normalizedName, ReturnStatus, toStoredState } from "@microdcs/job-state"
import type { Json, JsonObject } from "../Json.js"

/**
 * The pieces several payload schemas share, each written once: ids, texts, the OPC UA state
 * list, ReturnStatus. Where the code has the values (state names, status bits, limits), they come
 * from it.
 */

/** An object with these properties; `required` lists the ones that must be there. */
export const object = (properties: Readonly<Record<string, Json>>, required: ReadonlyArray<string> = [], more: JsonObject = {}): JsonObject => ({
  type: "object",
  properties,
  ...(required.length > 0 ? { required } : {}),
  ...more
})

/** As {@link object}, and no other property: what the island sends, field for field. */
export const closedObject = (properties: Readonly<Record<string, Json>>, required: ReadonlyArray<string> = [], more: JsonObject = {}): JsonObject =>
  object(properties, required, { additionalProperties: false, ...more })

export const arrayOf = (items: Json, more: JsonObject = {}): JsonObject => ({ type: "array", items, ...more })

export const text = (description: string, more: JsonObject = {}): JsonObject => ({ type: "string", description, ...more })

/** A control character, which no id may hold (a broker refuses it in a topic or user property). */
const NO_CONTROL_CHARACTERS = "^[^\\u0000-\\u001f\\u007f-\\u009f]+$"

/** An id the island keys its store by: a non-empty text without control characters. */
export const idText = (description: string): JsonObject =>
  text(`${description} Non-empty, no control characters, at most ${MAX_KEY_PART_BYTES} bytes of UTF-8.`, { minLength: 1, pattern: NO_CONTROL_CHARACTERS })

export const integer = (description: string, more: JsonObject = {}): JsonObject => ({ type: "integer", description, ...more })

/** OPC UA LocalizedText. */
export const localizedText: JsonObject = object({ Text: { type: "string" }, Locale: { type: "string" } }, ["Text"], {
  description: "OPC UA LocalizedText."
})

/** A method's optional `Comment`: a text, or OPC UA LocalizedText[] (the English entry is kept, else the first). */
export const comment: JsonObject = {
  description: "Why the method is called: a text, or OPC UA LocalizedText[] (the English entry is kept, else the first).",
  anyOf: [{ type: "string" }, arrayOf(localizedText)]
}

const statusBits = Object.entries(ReturnStatus)
  .map(([name, bit]) => `${bit} ${name}`)
  .join(", ")

/** The OPC UA ReturnStatus: a bit set. */
export const returnStatus: JsonObject = integer(`OPC UA Machinery Jobs ReturnStatus, a bit set: ${statusBits}. NO_ERROR alone means success.`, {
  minimum: 0
})

/** Every normalized state name (`AllowedToStart_Ready`, `Running`), from the state table. */
export const stateName: JsonObject = {
  description: "A job order state's normalized name: its state texts joined with `_`.",
  enum: allJobStates.map(normalizedName)
}

/** One OPC UA ISA95StateDataType entry. */
const isa95State: JsonObject = closedObject(
  { StateText: closedObject({ Text: { type: "string" }, Locale: { const: "en" } }, ["Text", "Locale"], { description: "OPC UA LocalizedText, in English." }), StateNumber: integer("The state's number in the ISA-95 job order state machine.", { minimum: 0 }) },
  ["StateText", "StateNumber"],
  { description: "OPC UA ISA95StateDataType." }
)

const stateListOf = (states: ReadonlyArray<JobState>, description: string): JsonObject =>
  arrayOf(isa95State, { description, minItems: 1, maxItems: 2, enum: states.map((state) => toStoredState(state) as unknown as Json) })

/**
 * A job order state as OPC UA writes it (ISA95StateDataType[]: the main state, then its
 * substate); the enum lists every state of the state table, exactly as the island writes it.
 */
export const stateList: JsonObject = stateListOf(
  allJobStates,
  "A job order state as OPC UA ISA95StateDataType[]: the main state, then the substate of a compound state."
)

/** The `Problems` of a refusal that lists every problem as a text. */
export const problemTexts: JsonObject = arrayOf({ type: "string" }, { description: "Every problem found, so all can be fixed at once.", minItems: 1 })

/** At least one of these properties must be there (they are defined beside this, in the same object). */
export const oneOfPresent = (names: ReadonlyArray<string>): JsonObject => ({
  anyOf: names.map((name) => ({ properties: { [name]: true }, required: [name] }))
})
