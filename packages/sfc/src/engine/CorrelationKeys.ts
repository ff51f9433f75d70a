import { type MatchTarget, parseMatches, placeOf } from "../recipe/correlationKey.js"
import type { Recipe } from "../recipe/Recipe.js"

/**
 * The values of pull events' correlation keys (recipe schema v1.1.0): what a job expects, fixed
 * when it starts, and what an event carries. Both compare as text.
 */

/** The longest key value, in UTF-8 bytes: it becomes part of a store key. */
export const MAX_KEY_BYTES = 256

/** An event as a key is read from it: its CloudEvent attributes by name (extensions too) and its data. */
export interface KeyedEvent {
  readonly attributes?: Readonly<Record<string, string>> | undefined
  readonly data?: unknown
}

const isPlainObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A value as a key: a string as it is, a finite number or a boolean as JSON writes it (an attribute
 * `42` equals a data field 42). Anything else, an empty string or one over {@link MAX_KEY_BYTES}, is none.
 */
export const keyText = (value: unknown): string | undefined => {
  const text = typeof value === "string" ? value : (typeof value === "number" && Number.isFinite(value)) || typeof value === "boolean" ? String(value) : undefined
  return text !== undefined && text.length > 0 && Buffer.byteLength(text, "utf8") <= MAX_KEY_BYTES ? text : undefined
}

/** Own fields of plain objects, array elements by index; anything missing on the way is `undefined`. */
const readPath = (value: unknown, path: ReadonlyArray<string>): unknown => {
  let at = value
  for (const part of path) {
    if (Array.isArray(at)) at = /^\d+$/.test(part) ? at[Number(part)] : undefined
    else if (isPlainObject(at) && Object.hasOwn(at, part)) at = at[part]
    else return undefined
  }
  return at
}

/** The key an event carries at a place (`attribute.<name>` or `data.<path>`, see `placeOf`), if any. */
export const eventKeyAt = (place: string, event: KeyedEvent): string | undefined => {
  if (place.startsWith("attribute.")) {
    const attributes = event.attributes ?? {}
    const name = place.slice("attribute.".length)
    return Object.hasOwn(attributes, name) ? keyText(attributes[name]) : undefined
  }
  return place.startsWith("data.") ? keyText(readPath(event.data, place.slice("data.".length).split("."))) : undefined
}

/** An OPC UA Variant in its JSON form (`{ Type, Body }`) stands for its body. */
const variantBody = (value: unknown): unknown => (isPlainObject(value) && Object.hasOwn(value, "Body") ? value["Body"] : value)

/** The value a match target names for this job (its id, a job order field, a job order parameter's value). */
const targetValue = (target: MatchTarget, jobId: string, order: unknown): unknown => {
  switch (target._tag) {
    case "JobId":
      return jobId
    case "OrderField":
      return readPath(order, target.path)
    case "Parameter": {
      const parameters = readPath(order, ["JobOrderParameters"])
      const found = Array.isArray(parameters) ? parameters.find((p) => isPlainObject(p) && p["ID"] === target.id) : undefined
      return isPlainObject(found) ? variantBody(found["Value"]) : undefined
    }
  }
}

type Action = Recipe["Actions"][number]

/** The action's key place, when it names one. */
export const keyPlaceOf = (action: Action | undefined): string | undefined =>
  action?.CorrelationKey !== undefined ? placeOf(action.CorrelationKey) : undefined

/**
 * The key each keyed action of the recipe expects for this job (action name → value), fixed at
 * start; `problem` names the first action whose value the job order does not give.
 */
export const expectedKeys = (
  recipe: Recipe,
  jobId: string,
  order: unknown
): { readonly keys: Readonly<Record<string, string>> } | { readonly problem: string } => {
  const keys: Record<string, string> = {}
  for (const action of recipe.Actions) {
    if (action.CorrelationKey === undefined || action.Matches === undefined) continue
    const target = parseMatches(action.Matches)
    const value = target === undefined ? undefined : keyText(targetValue(target, jobId, order))
    if (value === undefined) {
      return {
        problem: `action ${action.Name}: its correlation key must equal ${action.Matches}, which the job order does not give as a string, number or boolean of 1 to ${MAX_KEY_BYTES} bytes`
      }
    }
    keys[action.Name] = value
  }
  return { keys }
}
