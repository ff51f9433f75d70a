import { Schema } from "effect"
import { RecipeWire, RecipeWireV1_1 } from "./Recipe.js"
import type { RecipeSchemaVersion } from "./Recipe.js"
import { RECIPE_SCHEMA_IDS } from "./RecipeVersions.js"

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

const isNullType = (value: Json): boolean => typeof value === "object" && value !== null && !Array.isArray(value) && (value as { type?: Json }).type === "null"

/**
 * `{ anyOf: [s, { type: "null" }] }` becomes `s`, everywhere: the generator describes an
 * optional key as nullable (its JSON codec's reading), the recipe decoder refuses a null there.
 */
const withoutNullAlternatives = (value: Json): Json => {
  if (Array.isArray(value)) return value.map(withoutNullAlternatives)
  if (typeof value !== "object" || value === null) return value
  const object = value as { readonly [key: string]: Json }
  const anyOf = object["anyOf"]
  if (Array.isArray(anyOf) && anyOf.length === 2 && anyOf.some(isNullType)) {
    const { anyOf: _dropped, ...rest } = object
    return withoutNullAlternatives({ ...rest, ...(anyOf.find((s) => !isNullType(s)) as object) })
  }
  return Object.fromEntries(Object.entries(object).map(([key, inner]) => [key, withoutNullAlternatives(inner)]))
}

/**
 * The JSON Schema (draft 2020-12) of a recipe of `version` (default 1.0.0), the `data` of a work
 * master whose `dataschema` is that version's id (`RECIPE_SCHEMA_IDS`): generated from the recipe
 * model itself, so it cannot drift from what the island accepts. It checks the shape of each
 * element (PascalCase names; `Initial` and `Priority` may be left out); the rules across elements
 * (unique names, references, reachability, conditions) are `validateRecipe`'s. The repository
 * publishes each under its `$id` as `docs/schemas/sfc-recipe/v{version}/schema.json`.
 */
export const recipeJsonSchema = (version: RecipeSchemaVersion = "1.0.0"): { readonly [key: string]: Json } => {
  const document = Schema.toJsonSchemaDocument(version === "1.1.0" ? RecipeWireV1_1 : RecipeWire)
  const schema = withoutNullAlternatives(document.schema as Json) as { readonly [key: string]: Json }
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: RECIPE_SCHEMA_IDS[version],
    title: `SFC recipe v${version}`,
    description: "A recipe as a work master's data: steps, transitions, actions and branches of a sequential function chart.",
    ...schema,
    $defs: withoutNullAlternatives(document.definitions as Json)
  }
}
