import type { RecipeSchemaVersion } from "./Recipe.js"

/**
 * The versions of the recipe schema. A work master names its recipe's version by its
 * `dataschema`; the island runs each recipe by the rules of the version it names, so a v1.0.0
 * recipe keeps running exactly as it did when v1.1.0 arrived.
 */

/** The `dataschema` of a work master whose `data` is a v1.0.0 recipe (the identifier the MES side uses). */
export const RECIPE_SCHEMA_ID = "https://aschamberger.github.io/schemas/microdcs/sfc-recipe/v1.0.0/"

/** The `dataschema` of a work master whose `data` is a v1.1.0 recipe (waiting transitions, time limits, ...). */
export const RECIPE_SCHEMA_ID_V1_1 = "https://aschamberger.github.io/schemas/microdcs/sfc-recipe/v1.1.0/"


/** Every recipe schema id a work master may name, oldest first, with its version. */
export const RECIPE_SCHEMA_IDS: Readonly<Record<RecipeSchemaVersion, string>> = {
  "1.0.0": RECIPE_SCHEMA_ID,
  "1.1.0": RECIPE_SCHEMA_ID_V1_1
}

/** The recipe version a `dataschema` names, or `undefined` when it names no recipe schema. */
export const versionOfSchemaId = (dataschema: unknown): RecipeSchemaVersion | undefined =>
  dataschema === RECIPE_SCHEMA_ID ? "1.0.0" : dataschema === RECIPE_SCHEMA_ID_V1_1 ? "1.1.0" : undefined

/**
 * The version a recipe runs by. A v1.0.0 recipe carries no `SchemaVersion` (so its digest, and
 * every recipe stored before v1.1.0, stay as they were): absent means 1.0.0.
 */
export const recipeSchemaVersion = (recipe: { readonly SchemaVersion?: string | undefined }): RecipeSchemaVersion =>
  recipe.SchemaVersion === "1.1.0" ? "1.1.0" : "1.0.0"
