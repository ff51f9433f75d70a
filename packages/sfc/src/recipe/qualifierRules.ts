import { DELAYED, LIMITED, STOPPED, STORED } from "./QualifierSchema.js"
import type { RecipeDraft } from "./Recipe.js"
import type { RecipeProblem } from "./RecipeProblem.js"
import { type Path, problem, quote, type RecipeCheck } from "./recipeCheck.js"
import { recipeSchemaVersion } from "./RecipeVersions.js"
import { needsV11 } from "./timeLimitRules.js"

/**
 * The rules of the action qualifiers (QualifierSchema.ts): which qualifier each version knows,
 * and the fields each qualifier needs or refuses (`Stop`, `Resets`, `Limit`, `Delay`).
 */

type DraftAction = RecipeDraft["Actions"][number]

const V1_0 = new Set(["N", "P"])

const meanings: ReadonlyMap<string, string> = new Map([
  ["P1", "pulse on entry"],
  ["P0", "pulse on exit"],
  ["S", "stored"],
  ["R", "reset"],
  ["L", "time limited"],
  ["D", "time delayed"],
  ["SD", "stored and time delayed"],
  ["DS", "time delayed and stored"],
  ["SL", "stored and time limited"]
])

/** A qualifier of neither version, or a v1.1.0 one in a v1.0.0 recipe. */
export const supportedQualifiers: RecipeCheck = (recipe) =>
  recipe.Actions.flatMap((a, i) => {
    if (V1_0.has(a.Qualifier)) return []
    const path: Path = ["Actions", i, "Qualifier"]
    const meaning = meanings.get(a.Qualifier)
    if (meaning !== undefined) return needsV11(recipe, path, `action ${quote(a.Name)}: qualifier ${a.Qualifier} (${meaning})`)
    return [problem("qualifier", path, `action ${quote(a.Name)}: qualifier ${quote(a.Qualifier)} is not an IEC 61131-3 qualifier this engine runs; use N, P, P1, P0, S, R, L, SL, D, SD or DS (all but N and P need recipe schema v1.1.0)`)]
  })

const fields = ["Stop", "Resets", "Limit", "Delay"] as const
type QualifierField = (typeof fields)[number]

/** Which qualifiers need each field (the others refuse it). */
const needers: Readonly<Record<QualifierField, ReadonlySet<string>>> = { Stop: STOPPED, Resets: new Set(["R"]), Limit: LIMITED, Delay: DELAYED }

/** Each field a qualifier needs and lacks, or has and does not use. */
const fieldProblems = (a: DraftAction, i: number): ReadonlyArray<RecipeProblem> =>
  fields.flatMap((field) => {
    const needed = needers[field].has(a.Qualifier)
    const given = a[field] !== undefined
    if (needed === given || (!meanings.has(a.Qualifier) && !V1_0.has(a.Qualifier))) return []
    const path: Path = ["Actions", i, given ? field : "Qualifier"]
    const message = needed ? `qualifier ${a.Qualifier} needs ${field}` : `${field} is for qualifier ${[...needers[field]].join(", ")}, not ${a.Qualifier}`
    return [problem("qualifier", path, `action ${quote(a.Name)}: ${message}`)]
  })

/** What the R action resets: a stored action, whose stop the R action sends (so its TypeId is the stop's). */
const resetProblems = (recipe: RecipeDraft, a: DraftAction, i: number): ReadonlyArray<RecipeProblem> => {
  if (a.Qualifier !== "R" || a.Resets === undefined) return []
  const label = `action ${quote(a.Name)}`
  const target = recipe.Actions.find((b) => b.Name === a.Resets)
  if (target === undefined) return [problem("unknown-reference", ["Actions", i, "Resets"], `${label}: Resets ${quote(a.Resets)} is not an action`)]
  if (!STORED.has(target.Qualifier)) {
    return [problem("qualifier", ["Actions", i, "Resets"], `${label}: Resets ${quote(a.Resets)}, whose qualifier ${target.Qualifier} is not stored (S, SL, SD or DS)`)]
  }
  const out: Array<RecipeProblem> = []
  const stop = target.Stop?.TypeId
  if (stop !== undefined && a.TypeId !== stop) {
    out.push(problem("qualifier", ["Actions", i, "TypeId"], `${label}: an R action sends the Stop of ${quote(target.Name)}, so its TypeId must be ${quote(stop)}, not ${quote(a.TypeId)}`))
  }
  if (a.Parameters !== undefined) out.push(problem("qualifier", ["Actions", i, "Parameters"], `${label}: an R action sends the Stop.Parameters of ${quote(target.Name)}; it has no Parameters of its own`))
  return out
}

/** Fields, push commands only for the new qualifiers, no retry on a command that is sent once, and what R resets. */
export const qualifierFieldRules: RecipeCheck = (recipe) =>
  recipe.Actions.flatMap((a, i) => {
    const label = `action ${quote(a.Name)}`
    const versioned = fields.flatMap((field) => (a[field] === undefined ? [] : needsV11(recipe, ["Actions", i, field], `${label}: ${field}`)))
    // A v1.0.0 recipe hears only that these need v1.1.0, not how v1.1.0 would want them.
    if (versioned.length > 0 || (!V1_0.has(a.Qualifier) && recipeSchemaVersion(recipe) !== "1.1.0")) return versioned
    const pull =
      meanings.has(a.Qualifier) && a.Interaction === "pull_event"
        ? [problem("qualifier", ["Actions", i, "Interaction"], `${label}: qualifier ${a.Qualifier} is for push commands; a pull event takes N or P`)]
        : []
    const once =
      !V1_0.has(a.Qualifier) && meanings.has(a.Qualifier) && (a.Retry !== undefined || a.OnError !== undefined)
        ? [problem("qualifier", ["Actions", i, "Qualifier"], `${label}: Retry and OnError need qualifier N; a ${a.Qualifier} command is sent once and its step does not wait for it`)]
        : []
    return [...versioned, ...pull, ...once, ...fieldProblems(a, i), ...resetProblems(recipe, a, i)]
  })
