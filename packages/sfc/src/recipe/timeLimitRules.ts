import type { RecipeDraft } from "./Recipe.js"
import type { RecipeProblem } from "./RecipeProblem.js"
import { recipeSchemaVersion } from "./RecipeVersions.js"
import { type Path, quote, type RecipeCheck } from "./recipeCheck.js"

/**
 * The rules of the time limits (v1.1.0): `MaxDuration` and `OnMaxDuration` on a step,
 * `MaxJobDuration` on the recipe. Their syntax is the recipe model's (`Duration`); these rules
 * judge what the model cannot: the version, and where a time limit leads.
 */


/**
 * The problem of a v1.1.0 construct in a recipe that says v1.0.0 (none in a v1.1.0 recipe):
 * `construct` names it the way the message starts, `step "Press": MaxDuration`.
 */
export const needsV11 = (recipe: Pick<RecipeDraft, "SchemaVersion">, path: Path, construct: string): ReadonlyArray<RecipeProblem> =>
  recipeSchemaVersion(recipe) === "1.1.0"
    ? []
    : [{ rule: "needs-v1.1", path, message: `${construct} needs recipe schema v1.1.0` }]

export const timeLimitsNeedV11: RecipeCheck = (recipe) => [
  ...(recipe.MaxJobDuration !== undefined ? needsV11(recipe, ["MaxJobDuration"], "MaxJobDuration") : []),
  ...recipe.Steps.flatMap((step, i) =>
    (["MaxDuration", "OnMaxDuration"] as const).flatMap((field) =>
      step[field] !== undefined ? needsV11(recipe, ["Steps", i, field], `step ${quote(step.Name)}: ${field}`) : []
    )
  )
]

/** The branch path each step is on, with its branch's name. */
const pathSteps = (recipe: RecipeDraft): ReadonlyMap<string, string> =>
  new Map((recipe.Branches ?? []).flatMap((branch) => branch.Branches.flatMap((path) => path.map((step) => [step, branch.Name] as const))))

/**
 * `OnMaxDuration` needs a `MaxDuration` to run out, and names a step or branch that a transition
 * could enter: not a step on a branch path (a path is entered through its branch).
 */
export const timeLimitTargets: RecipeCheck = (recipe) => {
  const steps = new Set(recipe.Steps.map((s) => s.Name))
  const branches = new Set((recipe.Branches ?? []).map((b) => b.Name))
  const onPath = pathSteps(recipe)
  return recipe.Steps.flatMap((step, i): ReadonlyArray<RecipeProblem> => {
    const target = step.OnMaxDuration
    if (target === undefined) return []
    const path: Path = ["Steps", i, "OnMaxDuration"]
    const label = `step ${quote(step.Name)}`
    if (step.MaxDuration === undefined) {
      return [{ rule: "time-limit", path, message: `${label}: OnMaxDuration says where to go when MaxDuration runs out, but the step has no MaxDuration` }]
    }
    if (!steps.has(target) && !branches.has(target)) {
      return [{ rule: "unknown-reference", path, message: `${label}: OnMaxDuration ${quote(target)} is neither a step nor a branch` }]
    }
    const branch = onPath.get(target)
    return branch === undefined
      ? []
      : [{ rule: "time-limit", path, message: `${label}: OnMaxDuration enters ${quote(target)}, a step of branch ${quote(branch)}; a path is entered through its branch` }]
  })
}
