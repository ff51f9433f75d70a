import { Result } from "effect"
import { formatPath, type RecipeProblem, validateRecipe, validateWorkMasterRecipe } from "@microdcs/sfc"
import { canonicalRecipeDigest } from "@microdcs/store"
import { renderTable } from "./Table.js"

/** What a work master (or a bare recipe) file carries, checked with the engine's own rules. */
export interface RecipeCheck {
  /** `none`: a work master without the recipe schema, left to the MES as the daemon does. */
  readonly recipe: "valid" | "invalid" | "none"
  readonly problems: ReadonlyArray<{ readonly rule: string; readonly path: string; readonly message: string }>
  /**
   * The digest the island computes for a valid recipe (what `RECIPE_DIGESTS` pins and executions
   * record): SHA-256 of the canonical JSON of the recipe as validated, defaults filled in, not of
   * the file as written. `null` without a valid recipe.
   */
  readonly digest: string | null
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const looksLikeRecipe = (value: unknown): boolean => isObject(value) && ("Steps" in value || "steps" in value)

const fromEither = (result: Result.Result<unknown, ReadonlyArray<RecipeProblem>>): RecipeCheck =>
  Result.match(result, {
    onFailure: (problems) => ({
      recipe: "invalid",
      problems: problems.map((p) => ({ rule: p.rule, path: formatPath(p.path), message: p.message })),
      digest: null
    }),
    onSuccess: (recipe) => ({ recipe: "valid", problems: [], digest: canonicalRecipeDigest(recipe) })
  })

/**
 * Checks a work master as the daemon does before storing it; a file holding a bare recipe
 * (with `Steps`) is checked as a recipe, so a recipe can be validated before it is wrapped.
 */
export const checkRecipe = (document: unknown): RecipeCheck => {
  const asWorkMaster = validateWorkMasterRecipe(document)
  if (asWorkMaster !== undefined) return fromEither(asWorkMaster)
  if (looksLikeRecipe(document) && !("ID" in (document as object))) return fromEither(validateRecipe(document))
  return { recipe: "none", problems: [], digest: null }
}

/** The `ID` of a work master document, or undefined when it has none a key could be built from. */
export const workMasterId = (document: unknown): string | undefined =>
  isObject(document) && typeof document["ID"] === "string" && document["ID"].length > 0 ? document["ID"] : undefined

export const renderProblems = (check: RecipeCheck): string =>
  renderTable(
    [
      { header: "RULE", value: (p: RecipeCheck["problems"][number]) => p.rule },
      { header: "PATH", value: (p) => p.path },
      { header: "PROBLEM", value: (p) => p.message }
    ],
    check.problems
  )

export const describeCheck = (check: RecipeCheck): string =>
  check.recipe === "valid"
    ? "valid recipe"
    : check.recipe === "none"
      ? "no recipe (left to the MES)"
      : `invalid recipe: ${check.problems.length} problem(s)`
