import { Effect, Result } from "effect"
import { type Recipe, type RecipeProblem, formatPath, subRecipeCycles, subRecipesOf, validateWorkMasterRecipe } from "@microdcs/sfc"
import type { WorkMasterDao } from "@microdcs/store"
import { type Answer, refused } from "./Answer.js"
import { ReturnStatus } from "@microdcs/job-state"

/**
 * Sub-recipes (recipe v1.1.0) across work masters: a work master whose recipe reaches itself
 * through sub-recipe actions, directly or over other stored work masters, would start children
 * without end. A recipe alone cannot tell; this reads the stored work masters it reaches.
 */

/** Work masters read for one check at most: a catalogue deeper than this is not walked further. */
const MAX_WORK_MASTERS = 1_000

/** The recipe of a stored work master, or undefined (absent, not a recipe, invalid). */
const storedRecipe = (workMasters: WorkMasterDao["Service"], id: string) =>
  workMasters.get(id).pipe(
    Effect.map((stored) => {
      let document: unknown
      try {
        document = JSON.parse(stored.doc)
      } catch {
        return undefined
      }
      const recipe = validateWorkMasterRecipe(document)
      return recipe !== undefined && Result.isSuccess(recipe) ? recipe.success : undefined
    }),
    Effect.catchTag("NotFound", () => Effect.succeed(undefined))
  )

/** Every cycle the work master `id` with `recipe` closes through the stored work masters. */
export const cycleProblems = (workMasters: WorkMasterDao["Service"], id: string, recipe: Pick<Recipe, "Actions">) =>
  Effect.gen(function* () {
    const known = new Map<string, Pick<Recipe, "Actions">>()
    const queue = subRecipesOf(recipe).map((s) => s.workMasterId)
    const seen = new Set<string>([id])
    for (let next = queue.shift(); next !== undefined && seen.size <= MAX_WORK_MASTERS; next = queue.shift()) {
      if (seen.has(next)) continue
      seen.add(next)
      const found = yield* storedRecipe(workMasters, next)
      if (found === undefined) continue
      known.set(next, found)
      queue.push(...subRecipesOf(found).map((s) => s.workMasterId))
    }
    return subRecipeCycles(id, recipe, known)
  })

/** The refusal of a work master that runs itself: INVALID_REQUEST with every cycle listed. */
export const cycleRefusal = (id: string, problems: ReadonlyArray<RecipeProblem>): Answer =>
  refused(
    ReturnStatus.INVALID_REQUEST,
    "InvalidRecipe",
    `work master ${id}: ${problems.length} recipe problem(s): ${problems.map((p) => `${formatPath(p.path)}: ${p.message}`).join("; ")}`,
    { Problems: problems }
  )
