import { ATTRIBUTE_NAME, FIELD_PATH, MAX_PATH_SEGMENTS, parseMatches, UNFIT_ATTRIBUTES } from "./correlationKey.js"
import type { RecipeDraft } from "./Recipe.js"
import type { RecipeProblem } from "./RecipeProblem.js"
import { type Path, problem, quote, type RecipeCheck } from "./recipeCheck.js"
import { recipeSchemaVersion } from "./RecipeVersions.js"

/**
 * The rules of a pull event's correlation key (`CorrelationKey` + `Matches`, recipe schema
 * v1.1.0). Each judges one action on its own, so they run on the parts of a malformed recipe too.
 */

type DraftAction = RecipeDraft["Actions"][number]
type DraftKey = NonNullable<DraftAction["CorrelationKey"]>

const keyProblem = (path: Path, message: string) => problem("correlation-key", path, message)

/** Until the core's `SchemaVersion` lands everywhere, a recipe without one is v1.0.0. */

/** Both fields of the key are v1.1.0 constructs: a v1.0.0 recipe names neither. */
export const correlationNeedsV1_1: RecipeCheck = (recipe) =>
  recipeSchemaVersion(recipe) === "1.1.0"
    ? []
    : recipe.Actions.flatMap((a, i) =>
        (["CorrelationKey", "Matches"] as const)
          .filter((field) => a[field] !== undefined)
          .map((field) => problem("needs-v1.1", ["Actions", i, field], `action ${quote(a.Name)}: ${field} needs recipe schema v1.1.0`))
      )

const attributeProblem = (name: string): string | undefined => {
  if (!ATTRIBUTE_NAME.test(name)) return `Attribute ${quote(name)} is not a CloudEvent attribute name (lower-case letters and digits, at most 20)`
  if (name === "correlationid") return "Attribute correlationid routes replies to push commands; name another attribute"
  if (UNFIT_ATTRIBUTES.has(name)) return `Attribute ${name} is the same for every event of the type or new for each one, so it cannot pick a job`
  return undefined
}

const dataFieldProblem = (path: string): string | undefined => {
  if (!FIELD_PATH.test(path)) return `DataField ${quote(path)} is not a dot path of field names or indexes (no empty part, no spaces)`
  const segments = path.split(".").length
  return segments > MAX_PATH_SEGMENTS ? `DataField ${quote(path)} has ${segments} parts; at most ${MAX_PATH_SEGMENTS}` : undefined
}

/** The problems of where the key is: exactly one of `Attribute` and `DataField`, well formed. */
const placeProblems = (key: DraftKey, at: Path, label: string): ReadonlyArray<RecipeProblem> => {
  if (key.Attribute !== undefined && key.DataField !== undefined) {
    return [keyProblem(at, `${label}: CorrelationKey names Attribute and DataField; give one of them`)]
  }
  if (key.Attribute !== undefined) {
    const found = attributeProblem(key.Attribute)
    return found ? [keyProblem([...at, "Attribute"], `${label}: ${found}`)] : []
  }
  if (key.DataField !== undefined) {
    const found = dataFieldProblem(key.DataField)
    return found ? [keyProblem([...at, "DataField"], `${label}: ${found}`)] : []
  }
  return [keyProblem(at, `${label}: CorrelationKey needs Attribute (a CloudEvent attribute) or DataField (a dot path in the event's data)`)]
}

const matchesProblem = (matches: string): string | undefined =>
  parseMatches(matches) === undefined
    ? `Matches ${quote(matches)} is not jobid, order.<field path> (at most ${MAX_PATH_SEGMENTS} parts, none empty) or parameter.<ID>`
    : undefined

/** One action's key problems: a pull event's, both fields given, each well formed. */
const actionKeyProblems = (a: DraftAction, i: number): ReadonlyArray<RecipeProblem> => {
  if (a.CorrelationKey === undefined && a.Matches === undefined) return []
  const label = `action ${quote(a.Name)}`
  const at = (field: string): Path => ["Actions", i, field]
  const problems: Array<RecipeProblem> = []
  if (a.Interaction !== "pull_event") {
    const field = a.CorrelationKey !== undefined ? "CorrelationKey" : "Matches"
    problems.push(keyProblem(at(field), `${label}: a correlation key is for pull_event actions; a push_command's reply finds its job by its correlation id`))
  }
  if (a.CorrelationKey === undefined) problems.push(keyProblem(at("CorrelationKey"), `${label}: Matches needs a CorrelationKey saying where the event carries its key`))
  else problems.push(...placeProblems(a.CorrelationKey, at("CorrelationKey"), label))
  if (a.Matches === undefined) {
    problems.push(keyProblem(at("Matches"), `${label}: CorrelationKey needs Matches saying what the key must equal (jobid, order.<field path> or parameter.<ID>)`))
  } else {
    const found = matchesProblem(a.Matches)
    if (found) problems.push(keyProblem(at("Matches"), `${label}: ${found}`))
  }
  return problems
}

export const correlationKeys: RecipeCheck = (recipe) => recipe.Actions.flatMap(actionKeyProblems)

/** The correlation rules, in the order their problems are listed. */
export const correlationChecks: ReadonlyArray<RecipeCheck> = [correlationNeedsV1_1, correlationKeys]
