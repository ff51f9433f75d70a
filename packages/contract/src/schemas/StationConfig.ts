import { referenceIdField } from "@microdcs/job-control"
import { referenceKinds, type ReferenceKind } from "@microdcs/keyschema"
import { RECIPE_SCHEMA_IDS } from "@microdcs/sfc"
import type { JsonObject } from "../Json.js"
import { arrayOf, closedObject, idText, integer, object, oneOfPresent, returnStatus, text } from "./Common.js"

/**
 * The station configuration of a scope (`...config.{kind}.v1`): its reference lists, work
 * masters and acceptance limit. The method (PUT, the default, or DELETE) is the `method` user
 * property; the payloads reuse the ISA-95 data types a job order references them with.
 */

export { referenceKinds, type ReferenceKind }

/** `{ID}` (or `{MaterialClassID}`, ...) or a list of them: the ids to add (PUT) or remove (DELETE). */
export const referenceConfigSchema = (kind: ReferenceKind): JsonObject => {
  const field = referenceIdField[kind]
  const entry = object({ [field]: idText(`The id to add (PUT) or remove (DELETE) in the scope's ${kind} list.`) }, [field])
  return { description: `The ${kind} ids of a scope: one object or a list of them, each with ${field}.`, anyOf: [entry, arrayOf(entry, { minItems: 1 })] }
}

const count = (what: string) => integer(what, { minimum: 0 })

export const referenceConfigReplySchema: JsonObject = closedObject(
  { ReturnStatus: returnStatus, Added: count("How many ids a PUT added (0 for ids already listed)."), Removed: count("How many ids a DELETE removed.") },
  ["ReturnStatus"],
  { description: "The reply to a reference list configuration." }
)

/** The recipe a work master carries when its `dataschema` is that recipe version's id. */
const recipeOfVersion = (id: string): JsonObject => ({
  if: { properties: { dataschema: { const: id } }, required: ["dataschema"] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword in a plain value, never awaited
  then: { properties: { data: { $ref: id } }, required: ["data"] }
})

/** A work master to store (PUT): any object with an `ID`; one naming a recipe schema carries a recipe of that version. */
export const workMasterSchema: JsonObject = object(
  {
    ID: idText("The work master's id, which job orders name in WorkMasterID."),
    dataschema: text("The schema of `data`: a recipe schema's id (v1.0.0 or v1.1.0) for a work master the island runs."),
    data: { description: "The work master's data: a recipe when `dataschema` is a recipe schema's id." }
  },
  ["ID"],
  {
    description: "A work master to store (PUT); every other field is kept as sent. A recipe's problems are all listed in the refusal.",
    allOf: Object.values(RECIPE_SCHEMA_IDS).map(recipeOfVersion)
  }
)

export const workMasterDeleteSchema: JsonObject = object({ ID: idText("The work master to remove.") }, ["ID"], { description: "A work master to remove (DELETE)." })

const recipeProblem: JsonObject = closedObject(
  {
    rule: text("Which rule the recipe breaks (`structure`, `duplicate-name`, `unknown-reference`, ...)."),
    path: arrayOf({ anyOf: [{ type: "string" }, { type: "integer" }] }, { description: "Where in the recipe, PascalCase names and indices." }),
    message: { type: "string" }
  },
  ["rule", "path", "message"]
)

export const workMasterReplySchema: JsonObject = closedObject(
  {
    ReturnStatus: returnStatus,
    ID: { type: "string" },
    Version: integer("The stored work master's version after a PUT.", { minimum: 1 }),
    Removed: count("1 when a DELETE removed it, 0 when there was none."),
    Problems: arrayOf(recipeProblem, { description: "Every problem of a refused recipe (InvalidRecipe).", minItems: 1 }),
    PinnedDigest: text("The recipe digest pinned for this work master (RecipeDigestMismatch)."),
    RecipeDigest: { anyOf: [{ type: "string" }, { type: "null" }], description: "The digest of the recipe sent, null without a valid one (RecipeDigestMismatch)." }
  },
  ["ReturnStatus"],
  { description: "The reply to a work master configuration." }
)

/** The scope's acceptance limit (PUT); 0 means unlimited. A DELETE carries no data. */
export const jobAcceptanceSchema: JsonObject = object(
  {
    Limit: integer("How many job orders the scope takes at once (not yet retired); 0 = unlimited.", { minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    MaxDownloadableJobOrders: integer("The OPC UA name of Limit.", { minimum: 0, maximum: Number.MAX_SAFE_INTEGER })
  },
  [],
  { ...oneOfPresent(["Limit", "MaxDownloadableJobOrders"]), description: "The scope's job acceptance limit (PUT)." }
)

export const jobAcceptanceReplySchema: JsonObject = closedObject(
  { ReturnStatus: returnStatus, Limit: count("The limit a PUT set."), Removed: count("1 when a DELETE cleared a limit, 0 when there was none.") },
  ["ReturnStatus"],
  { description: "The reply to a job acceptance configuration." }
)
