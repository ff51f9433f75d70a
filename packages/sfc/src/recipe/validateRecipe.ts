import { Result } from "effect"
import { decodeRecipe, decodeRecipeDraft, type Recipe } from "./Recipe.js"
import type { RecipeProblem } from "./RecipeProblem.js"
import { elementChecks, recipeChecks } from "./recipeRules.js"
import { salvageDraft } from "./salvageDraft.js"

/** The `dataschema` of a work master whose `data` is a recipe (the identifier the MES side uses). */
export const RECIPE_SCHEMA_ID = "https://aschamberger.github.io/schemas/microdcs/sfc-recipe/v1.0.0/"
/** The `dataschema` of a work master whose recipe may use the fields of schema v1.1.0. */
export const RECIPE_SCHEMA_ID_V1_1 = "https://aschamberger.github.io/schemas/microdcs/sfc-recipe/v1.1.0/"

/**
 * Checks a recipe against every rule and reports every problem at once. Shape problems (a missing
 * field, a wrong type) come first; with them, the rules that look at one element at a time still
 * check every transition and action that decodes on its own (a missing `Actions` must not hide
 * a condition that does not parse), while the rules across elements wait for a sound shape: they
 * need names to work with. Never throws.
 */
export const validateRecipe = (input: unknown): Result.Result<Recipe, ReadonlyArray<RecipeProblem>> =>
  Result.match(decodeRecipeDraft(input), {
    onFailure: (shape) => Result.fail([...shape, ...elementChecks.flatMap((check) => check(salvageDraft(input)))]),
    onSuccess: (draft) => {
      const problems = recipeChecks.flatMap((check) => check(draft))
      // The draft passed every rule, so the strict decode narrows its types and cannot fail.
      return problems.length > 0 ? Result.fail(problems) : decodeRecipe(draft)
    }
  })

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Every `dataschema` of a work master that carries a recipe. */
export const RECIPE_SCHEMA_IDS: ReadonlyArray<string> = [RECIPE_SCHEMA_ID, RECIPE_SCHEMA_ID_V1_1]

/** The recipe with the version its work master's `dataschema` names (v1.0.0: none, which reads as v1.0.0). */
const withVersion = (data: unknown, dataschema: unknown): unknown => {
  if (!isObject(data)) return data
  const { SchemaVersion: _given, schema_version: _givenSnake, ...recipe } = data
  return dataschema === RECIPE_SCHEMA_ID_V1_1 ? { ...recipe, SchemaVersion: "1.1.0" } : recipe
}

/**
 * The recipe a work master carries, validated; `undefined` when its `dataschema` is not a recipe
 * schema (a work master without a recipe is left to the MES). The `dataschema` says the recipe's
 * schema version, whatever its data says.
 */
export const validateWorkMasterRecipe = (workMaster: unknown): Result.Result<Recipe, ReadonlyArray<RecipeProblem>> | undefined => {
  if (!isObject(workMaster) || !RECIPE_SCHEMA_IDS.includes(workMaster["dataschema"] as string)) return undefined
  if (!Object.hasOwn(workMaster, "data")) {
    return Result.fail([{ rule: "structure", path: [], message: "the work master names the recipe schema but has no data" }])
  }
  return validateRecipe(withVersion(workMaster["data"], workMaster["dataschema"]))
}
