/**
 * The words of a pull event's correlation key (recipe schema v1.1.0): where the event carries its
 * key (`CorrelationKey`) and what the key must equal (`Matches`). Pure text rules, shared by the
 * model's patterns, the validation and the engine.
 */

// The `u` flag lets the model's patterns go into its JSON Schema.

/** A CloudEvents attribute name: lower-case letters and digits, at most 20 (the spec's advice). */
export const ATTRIBUTE_NAME = /^[a-z0-9]{1,20}$/u

/** Field names or array indexes separated by dots, none empty, no spaces: `lot.id`, `items.0.lot`. */
export const FIELD_PATH = /^[^.\s]+(?:\.[^.\s]+)*$/u

/** `jobid`, `order.<field path>` or `parameter.<ID>` (the ID is the rest, as written). */
export const MATCHES = /^(?:jobid|order(?:\.[^.\s]+)+|parameter\..+)$/u

/** The most segments a field path may have (the event data and job orders are shallow). */
export const MAX_PATH_SEGMENTS = 16

/**
 * Attributes that never tell jobs apart (every event of the type has its own id and the same type)
 * or that route something else (`correlationid` routes replies).
 */
export const UNFIT_ATTRIBUTES: ReadonlySet<string> = new Set([
  "specversion",
  "id",
  "type",
  "time",
  "datacontenttype",
  "dataschema",
  "data",
  "correlationid"
])

/** What a key must equal: the job id, a field of the job order, or a job order parameter's value. */
export type MatchTarget =
  | { readonly _tag: "JobId" }
  | { readonly _tag: "OrderField"; readonly path: ReadonlyArray<string> }
  | { readonly _tag: "Parameter"; readonly id: string }

/** The target `Matches` names, or `undefined` when it is none of the three forms. */
export const parseMatches = (text: string): MatchTarget | undefined => {
  if (!MATCHES.test(text)) return undefined
  if (text === "jobid") return { _tag: "JobId" }
  if (text.startsWith("parameter.")) return { _tag: "Parameter", id: text.slice("parameter.".length) }
  const path = text.split(".").slice(1)
  return path.length <= MAX_PATH_SEGMENTS ? { _tag: "OrderField", path } : undefined
}

/** Where the key is, as the recipe names it: one of the two fields. */
export interface KeyPlace {
  readonly Attribute?: string | undefined
  readonly DataField?: string | undefined
}

/**
 * The place as one word, as the store's index keeps it: `attribute.<name>` or `data.<path>`. Two
 * actions that name the same place share it, whatever recipe they are in.
 */
export const placeOf = (key: KeyPlace): string =>
  key.Attribute !== undefined ? `attribute.${key.Attribute}` : `data.${key.DataField ?? ""}`
