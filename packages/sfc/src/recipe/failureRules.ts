import type { RecipeDraft } from "./Recipe.js"
import type { RecipeProblem } from "./RecipeProblem.js"
import { type Path, problem, quote, type RecipeCheck } from "./recipeCheck.js"
import { recipeSchemaVersion } from "./RecipeVersions.js"

/**
 * The rules of an action's failure policy (recipe schema v1.1.0): `Retry` (how often and how far
 * apart it is tried again) and `OnError` (where the recipe goes when it finally fails).
 */

type DraftAction = RecipeDraft["Actions"][number]

/** A recipe given under schema v1.0.0 has neither field: its author meant a schema it does not name. */
export const failureFieldsNeedV1_1: RecipeCheck = (recipe) => {
  if (recipeSchemaVersion(recipe) === "1.1.0") return []
  return recipe.Actions.flatMap((a, i) =>
    (["Retry", "OnError"] as const).flatMap((field) =>
      a[field] === undefined ? [] : [problem("needs-v1.1", ["Actions", i, field], `action ${quote(a.Name)}: ${field} needs recipe schema v1.1.0`)]
    )
  )
}

type RetryDraft = NonNullable<DraftAction["Retry"]>

/** Each number of a retry policy that is out of its range, named with the range it needs. */
const retryValueProblems = (retry: RetryDraft): ReadonlyArray<{ readonly field: keyof RetryDraft; readonly needs: string }> => {
  const out: Array<{ field: keyof RetryDraft; needs: string }> = []
  const positive = (value: number | undefined) => value === undefined || (Number.isFinite(value) && value > 0)
  if (!(Number.isInteger(retry.MaxAttempts) && retry.MaxAttempts >= 1)) out.push({ field: "MaxAttempts", needs: "a positive integer" })
  if (!positive(retry.InitialIntervalSeconds)) out.push({ field: "InitialIntervalSeconds", needs: "a positive number" })
  const coefficient = retry.BackoffCoefficient
  if (coefficient !== undefined && !(Number.isFinite(coefficient) && coefficient >= 1)) out.push({ field: "BackoffCoefficient", needs: "a number of at least 1" })
  if (!positive(retry.MaximumIntervalSeconds)) out.push({ field: "MaximumIntervalSeconds", needs: "a positive number" })
  else if (positive(retry.InitialIntervalSeconds) && (retry.MaximumIntervalSeconds ?? Infinity) < (retry.InitialIntervalSeconds ?? 1)) {
    out.push({ field: "MaximumIntervalSeconds", needs: `at least InitialIntervalSeconds (${retry.InitialIntervalSeconds ?? 1})` })
  }
  return out
}

/** Every number of every retry policy in range; and neither field on a pulse, which is sent once and never waited for. */
export const retryPolicies: RecipeCheck = (recipe) =>
  recipe.Actions.flatMap((a, i) => {
    const label = `action ${quote(a.Name)}`
    const pulse =
      a.Qualifier === "P" && (a.Retry !== undefined || a.OnError !== undefined)
        ? [problem("qualifier", ["Actions", i, "Qualifier"], `${label}: Retry and OnError need qualifier N; a pulse (P) is sent once and its step does not wait for it`)]
        : []
    const values = a.Retry === undefined ? [] : retryValueProblems(a.Retry)
    return [
      ...pulse,
      ...values.map(({ field, needs }) =>
        problem("retry", ["Actions", i, "Retry", field], `${label}: Retry.${field} must be ${needs}, not ${a.Retry![field]}`)
      )
    ]
  })

/** The branch whose path holds each step. */
const pathSteps = (recipe: RecipeDraft): ReadonlyMap<string, string> =>
  new Map((recipe.Branches ?? []).flatMap((branch) => branch.Branches.flatMap((path) => path.map((step) => [step, branch.Name] as const))))

/**
 * An OnError target is a step or branch outside every branch path (a path is entered through its
 * branch), and the failing action's step is on no path either: leaving one path for a target while
 * the branch's other paths run would leave the branch without its convergence.
 */
export const onErrorTargets: RecipeCheck = (recipe) => {
  const steps = new Set(recipe.Steps.map((s) => s.Name))
  const branches = new Set((recipe.Branches ?? []).map((b) => b.Name))
  const onPath = pathSteps(recipe)
  return recipe.Actions.flatMap((a, i) => {
    if (a.OnError === undefined) return []
    const label = `action ${quote(a.Name)}`
    const path: Path = ["Actions", i, "OnError"]
    const out: Array<RecipeProblem> = []
    const from = onPath.get(a.Step)
    if (from !== undefined) out.push(problem("branch-path", path, `${label} is on step ${quote(a.Step)} of branch ${quote(from)}: a step on a branch path is not left by OnError`))
    const into = onPath.get(a.OnError)
    if (!steps.has(a.OnError) && !branches.has(a.OnError)) out.push(problem("unknown-reference", path, `${label}: OnError target ${quote(a.OnError)} is neither a step nor a branch`))
    else if (into !== undefined) out.push(problem("branch-path", path, `${label}: OnError enters ${quote(a.OnError)}, a step of branch ${quote(into)}; a path is entered through its branch`))
    return out
  })
}
