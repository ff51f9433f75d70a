import type { Recipe } from "./Recipe.js"
import type { RecipeProblem } from "./RecipeProblem.js"
import { type Path, problem, quote, type RecipeCheck } from "./recipeCheck.js"
import { needsV11 } from "./timeLimitRules.js"

/**
 * The rules of a sub-recipe action (recipe schema v1.1.0, `Interaction: "recipe"`): it runs the
 * recipe of the work master `WorkMasterID` (pinned by `Digest` when given) as a child execution.
 * A recipe alone can only be checked for the action's shape; whether the work masters reach
 * themselves through sub-recipes is `subRecipeCycles`', run where a work master is stored.
 */

const SUB_RECIPE_FIELDS = ["WorkMasterID", "Digest"] as const

/** A recipe digest: the SHA-256 of the recipe's canonical JSON, lower-case hex. */
const DIGEST = /^[0-9a-f]{64}$/

/** `Interaction: "recipe"`, `WorkMasterID` and `Digest` are constructs of v1.1.0. */
export const subRecipesNeedV1_1: RecipeCheck = (recipe) =>
  recipe.Actions.flatMap((a, i) => [
    ...(a.Interaction === "recipe" ? needsV11(recipe, ["Actions", i, "Interaction"], `action ${quote(a.Name)}: Interaction "recipe"`) : []),
    ...SUB_RECIPE_FIELDS.flatMap((field) => (a[field] !== undefined ? needsV11(recipe, ["Actions", i, field], `action ${quote(a.Name)}: ${field}`) : []))
  ])

/**
 * A sub-recipe action names its work master, its digest (when pinned) is one, and it is waited for
 * (`N`: the parent action completes with the child's result). The fields belong to no other action.
 */
export const subRecipeShapes: RecipeCheck = (recipe) =>
  recipe.Actions.flatMap((a, i) => {
    const label = `action ${quote(a.Name)}`
    const at = (field: string): Path => ["Actions", i, field]
    if (a.Interaction !== "recipe") {
      return SUB_RECIPE_FIELDS.flatMap((field) =>
        a[field] === undefined ? [] : [problem("sub-recipe", at(field), `${label}: ${field} is for actions with Interaction "recipe"`)]
      )
    }
    const out: Array<RecipeProblem> = []
    if (a.WorkMasterID === undefined) out.push(problem("sub-recipe", at("WorkMasterID"), `${label}: a sub-recipe needs the WorkMasterID whose recipe it runs`))
    if (a.Digest !== undefined && !DIGEST.test(a.Digest)) out.push(problem("sub-recipe", at("Digest"), `${label}: Digest ${quote(a.Digest)} is not a recipe digest (64 lower-case hex digits)`))
    if (a.Qualifier === "P") out.push(problem("qualifier", at("Qualifier"), `${label}: a sub-recipe needs qualifier N; its step waits for the child's result`))
    return out
  })

/** The sub-recipe rules, in the order their problems are listed. */
export const subRecipeChecks: ReadonlyArray<RecipeCheck> = [subRecipesNeedV1_1, subRecipeShapes]

/** The work masters a recipe's sub-recipe actions run, with the action that runs each. */
export const subRecipesOf = (recipe: Pick<Recipe, "Actions">): ReadonlyArray<{ readonly action: string; readonly index: number; readonly workMasterId: string }> =>
  recipe.Actions.flatMap((a, index) => (a.Interaction === "recipe" && a.WorkMasterID !== undefined ? [{ action: a.Name, index, workMasterId: a.WorkMasterID }] : []))

/**
 * Every way the work master `id` (whose recipe is `recipe`, about to be stored) reaches itself
 * through sub-recipes, directly or over others, as far as `known` (the stored work masters'
 * recipes by id) tells: one problem per sub-recipe action of `recipe` that starts such a cycle,
 * naming the whole chain. A work master `known` lacks ends its chain (it is checked when stored).
 */
export const subRecipeCycles = (id: string, recipe: Pick<Recipe, "Actions">, known: ReadonlyMap<string, Pick<Recipe, "Actions">>): ReadonlyArray<RecipeProblem> =>
  subRecipesOf(recipe).flatMap(({ action, index, workMasterId }) => {
    const chain = chainBack(id, workMasterId, known)
    return chain === undefined
      ? []
      : [problem("sub-recipe-cycle", ["Actions", index, "WorkMasterID"], `action ${quote(action)}: work master ${[id, ...chain].map(quote).join(" → ")} runs itself through sub-recipes`)]
  })

/** The shortest chain of work master ids from `from` back to `target` (breadth first), or undefined. */
const chainBack = (target: string, from: string, known: ReadonlyMap<string, Pick<Recipe, "Actions">>): ReadonlyArray<string> | undefined => {
  const cameFrom = new Map<string, string | undefined>([[from, undefined]])
  const queue = [from]
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (next === target) {
      const chain: Array<string> = []
      for (let at: string | undefined = next; at !== undefined; at = cameFrom.get(at)) chain.unshift(at)
      return chain
    }
    const recipe = known.get(next)
    for (const { workMasterId } of recipe === undefined ? [] : subRecipesOf(recipe)) {
      if (cameFrom.has(workMasterId)) continue
      cameFrom.set(workMasterId, next)
      queue.push(workMasterId)
    }
  }
  return undefined
}
