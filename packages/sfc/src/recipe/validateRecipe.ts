import { Result } from "effect"
import { decodeRecipe, decodeRecipeDraft, type Recipe, type RecipeDraft, type RecipeSchemaVersion } from "./Recipe.js"
import type { RecipeProblem } from "./RecipeProblem.js"
import { versionOfSchemaId } from "./RecipeVersions.js"
import { elementChecks, recipeChecks } from "./recipeRules.js"
import { salvageDraft } from "./salvageDraft.js"

/**
 * The version to validate by: the one asked for (a work master's dataschema), else the one the
 * recipe says, else 1.0.0. A recipe that says another version than its work master is refused.
 */
const versionFor = (input: unknown, asked: RecipeSchemaVersion | undefined): Result.Result<RecipeSchemaVersion, RecipeProblem> => {
  const given = typeof input === "object" && input !== null ? (input as { readonly SchemaVersion?: unknown; readonly schema_version?: unknown }) : {}
  const said = given.SchemaVersion ?? given.schema_version
  if (asked === undefined || said === undefined || said === asked) return Result.succeed(asked ?? (said === "1.1.0" ? "1.1.0" : "1.0.0"))
  return Result.fail({ rule: "structure", path: ["SchemaVersion"], message: `SchemaVersion ${JSON.stringify(said)} is not the version the work master's dataschema names (${asked})` })
}

/** The version in the recipe as it is kept: "1.1.0" named, "1.0.0" left out (its JSON and digest stay as they were). */
const withVersion = <R extends RecipeDraft>(recipe: R, version: RecipeSchemaVersion): R => {
  const { SchemaVersion: _given, ...rest } = recipe
  return (version === "1.1.0" ? { ...rest, SchemaVersion: version } : rest) as R
}

/**
 * Checks a recipe against every rule of its schema version and reports every problem at once.
 * `version`: the version the work master's dataschema names (default: the recipe's own
 * `SchemaVersion`, else 1.0.0); a construct of v1.1.0 in a v1.0.0 recipe is a `needs-v1.1`
 * problem. Shape problems (a missing field, a wrong type) come first; with them, the rules that look at one element at a time still
 * check every transition and action that decodes on its own (a missing `Actions` must not hide
 * a condition that does not parse), while the rules across elements wait for a sound shape: they
 * need names to work with. Never throws.
 */
export const validateRecipe = (input: unknown, version?: RecipeSchemaVersion): Result.Result<Recipe, ReadonlyArray<RecipeProblem>> => {
  const checked = versionFor(input, version)
  if (Result.isFailure(checked)) return Result.fail([checked.failure])
  return Result.match(decodeRecipeDraft(input), {
    onFailure: (shape) => Result.fail([...shape, ...elementChecks.flatMap((check) => check(withVersion(salvageDraft(input), checked.success)))]),
    onSuccess: (decoded) => {
      const draft = withVersion(decoded, checked.success)
      const problems = recipeChecks.flatMap((check) => check(draft))
      // The draft passed every rule, so the strict decode narrows its types and cannot fail.
      return problems.length > 0 ? Result.fail(problems) : decodeRecipe(draft)
    }
  })
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The recipe a work master carries, validated by the version its `dataschema` names (any of
 * `RECIPE_SCHEMA_IDS`); `undefined` when it names no recipe schema (a work master without a
 * recipe is left to the MES).
 */
export const validateWorkMasterRecipe = (workMaster: unknown): Result.Result<Recipe, ReadonlyArray<RecipeProblem>> | undefined => {
  const version = isObject(workMaster) ? versionOfSchemaId(workMaster["dataschema"]) : undefined
  if (version === undefined) return undefined
  if (!Object.hasOwn(workMaster as object, "data")) {
    return Result.fail([{ rule: "structure", path: [], message: "the work master names the recipe schema but has no data" }])
  }
  return validateRecipe((workMaster as Readonly<Record<string, unknown>>)["data"], version)
}
