import { recipeSchemaVersion } from "./RecipeVersions.js"
import { Result } from "effect"
import { actionField, orderField, stepFlag } from "../condition/ConditionAst.js"
import { type ConditionReference, referencesIn } from "../condition/conditionReads.js"
import { parseCondition } from "../condition/parseCondition.js"
import { printCondition } from "../condition/printCondition.js"
import { jobOrderFields } from "./jobOrderFields.js"
import type { RecipeDraft } from "./Recipe.js"
import type { RecipeProblem } from "./RecipeProblem.js"
import { quote, type RecipeCheck, transitionLabel } from "./recipeCheck.js"
import { type ReadableActions, readableActions } from "./readableActions.js"

type Action = RecipeDraft["Actions"][number]

/** What one transition's condition can read, for judging its names. */
interface NameContext {
  readonly readable: ReadableActions
  readonly steps: ReadonlySet<string>
  readonly branches: ReadonlySet<string>
  /** Every action of the recipe by name, for saying where a misplaced one is. */
  readonly actions: ReadonlyMap<string, Action>
}

/** The results a bare name can come from, when every readable action declares its own; else undefined (unchecked). */
const declaredResults = ({ readable }: NameContext): ReadonlySet<string> | undefined =>
  readable.actions.every((a) => a.Results !== undefined) ? new Set(readable.actions.flatMap((a) => a.Results ?? [])) : undefined

const actionFieldProblem = (context: NameContext, action: string, field: string): string | undefined => {
  const readable = context.readable.actions.find((a) => a.Name === action)
  if (readable !== undefined) {
    return readable.Results === undefined || readable.Results.includes(field) ? undefined : `action ${quote(action)} declares no result ${quote(field)}`
  }
  if (context.steps.has(action)) return `${quote(action)} is a step: read ${printCondition(stepFlag(action, "X"))} (active) or ${printCondition(stepFlag(action, "T"))} (time active)`
  if (context.branches.has(action)) return `${quote(action)} is a branch; X and T are read of steps, results of actions`
  const elsewhere = context.actions.get(action)
  if (elsewhere !== undefined) return `action ${quote(action)} belongs to step ${quote(elsewhere.Step)}, not to ${context.readable.described}`
  return `there is no action ${quote(action)}`
}

/** Why nothing supplies `ref`, or undefined when something can. Counters are the journal's: their names are checked for form only. */
const nameProblem = (context: NameContext, ref: ConditionReference): string | undefined => {
  switch (ref._tag) {
    case "Name": {
      const results = declaredResults(context)
      if (results === undefined || results.has(ref.name)) return undefined
      return context.readable.actions.length === 0
        ? `nothing supplies it: ${context.readable.none}`
        : `none of ${context.readable.described} declares a result ${quote(ref.name)}`
    }
    case "ActionField":
      return actionFieldProblem(context, ref.action, ref.field)
    case "OrderField":
      return jobOrderFields.includes(ref.path[0]!) ? undefined : `a job order has no field ${quote(ref.path[0]!)}`
    default:
      return undefined
  }
}

/** `verify.<field>`: any field of an action that declares none. */
const anyFieldOf = (action: string): string => printCondition(actionField(action, "field")).replace(/field$/, "<field>")

/** What the condition could read instead, as condition text: the job order's fields for an order field, else everything. */
const candidatesFor = (context: NameContext, ref: ConditionReference): ReadonlyArray<string> => {
  const order = jobOrderFields.map((field) => printCondition(orderField([field])))
  if (ref._tag === "OrderField") return order
  const results = context.readable.actions.flatMap((a) =>
    a.Results === undefined ? [anyFieldOf(a.Name)] : a.Results.map((r) => printCondition(actionField(a.Name, r)))
  )
  const bare = [...(declaredResults(context) ?? [])]
  const steps = [...context.steps].flatMap((s) => [printCondition(stepFlag(s, "X")), printCondition(stepFlag(s, "T"))])
  return [...new Set([...bare, ...results, ...steps, ...order, "counter.<name>"])]
}

const transitionProblems = (context: NameContext, condition: string, path: ReadonlyArray<string | number>, label: string): ReadonlyArray<RecipeProblem> => {
  const parsed = parseCondition(condition, { steps: context.steps })
  if (Result.isFailure(parsed)) return [] // conditionsParse reports it
  const seen = new Set<string>()
  return referencesIn(parsed.success).flatMap((ref) => {
    const text = printCondition(ref)
    const why = seen.has(text) ? undefined : nameProblem(context, ref)
    seen.add(text)
    if (why === undefined) return []
    const candidates = candidatesFor(context, ref)
    return [{ rule: "condition-name", path, message: `${label}: ${text}: ${why}; it can read ${candidates.join(", ")}`, candidates }]
  })
}

/**
 * In a v1.1.0 recipe every name a condition reads must be one something can supply: `action.field`
 * an action the transition reads (and, when the action declares `Results`, one of them), a bare
 * name a declared result of those actions (unchecked while any of them declares none: the
 * station's data is not the recipe's to know), `Step.X` / `Step.T` a step, `order.<field>` a job
 * order field. Each problem lists the candidates.
 */
export const conditionNames: RecipeCheck = (recipe) => {
  if (recipeSchemaVersion(recipe) !== "1.1.0") return []
  const steps = new Set(recipe.Steps.map((s) => s.Name))
  const branches = new Set((recipe.Branches ?? []).map((b) => b.Name))
  const actions = new Map(recipe.Actions.map((a) => [a.Name, a]))
  const readable = readableActions(recipe)
  return recipe.Transitions.flatMap((t, i) => {
    // A source that is neither is `referencesExist`'s problem.
    if (!steps.has(t.Source) && !branches.has(t.Source)) return []
    const context = { readable: readable(t), steps, branches, actions }
    return transitionProblems(context, t.Condition, ["Transitions", i, "Condition"], transitionLabel(t, i))
  })
}
