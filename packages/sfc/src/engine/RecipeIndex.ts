import { Result } from "effect"
import { type ConditionAst, type ConditionScope, evaluateCondition, parseCondition } from "../condition/index.js"
import type { Recipe } from "../recipe/Recipe.js"
import { recipeSchemaVersion } from "../recipe/RecipeVersions.js"

type Step = Recipe["Steps"][number]
type Transition = Recipe["Transitions"][number]
type Action = Recipe["Actions"][number]
type Branch = NonNullable<Recipe["Branches"]>[number]

/** A result an action produced, in recipe order: what conditions are evaluated against. */
export interface ActionResult {
  readonly action: string
  readonly result: unknown
}

/** What a condition reads besides results and counters (v1.1.0): the steps' flags and times, the job order. */
export type ConditionContext = Pick<ConditionScope, "steps" | "order">

export type CompiledCondition = (results: ReadonlyArray<ActionResult>, context?: ConditionContext) => boolean

/** Lookups the core needs, built once per recipe snapshot and cached by identity. */
export interface RecipeIndex {
  readonly recipe: Recipe
  /** The recipe runs by schema v1.1.0 (waiting transitions, time limits); false: v1.0.0, as it always ran. */
  readonly v11: boolean
  readonly initialStep: string
  readonly step: (name: string) => Step | undefined
  readonly branch: (name: string) => Branch | undefined
  readonly actionsOf: (step: string) => ReadonlyArray<Action>
  readonly action: (name: string) => Action | undefined
  /** Position of an action in the recipe (results of later actions win). */
  readonly actionOrder: (name: string) => number
  /** Outgoing transitions of a step or branch, in recipe order. */
  readonly outgoing: (source: string) => ReadonlyArray<Transition & { readonly order: number }>
  readonly condition: (text: string) => CompiledCondition
  /**
   * A condition's tree, parsed once; `undefined` when it does not parse. In a v1.1.0 recipe
   * `Press.X` and `Press.T` of a step are step flags; a v1.0.0 recipe reads them as it always did.
   */
  readonly parse: (text: string) => ConditionAst | undefined
}

const cache = new WeakMap<Recipe, RecipeIndex>()

const alwaysTrue: CompiledCondition = () => true
const alwaysFalse: CompiledCondition = () => false

const compile = (text: string, parse: (text: string) => ConditionAst | undefined): CompiledCondition => {
  const trimmed = text.trim()
  if (trimmed === "" || trimmed === "true" || trimmed === "always") return alwaysTrue
  const ast = parse(text)
  // Validation refuses recipes whose conditions do not parse; a snapshot that still has one
  // (a recipe stored before a grammar change) treats it as never true, and the job fails visibly.
  if (ast === undefined) return alwaysFalse
  return (results, context) => evaluateCondition(ast, context === undefined ? { results } : { results, ...context }) === true
}

/** Parses each condition text once per recipe (with the step names in v1.1.0). */
const parserOf = (recipe: Recipe, v11: boolean): ((text: string) => ConditionAst | undefined) => {
  const options = v11 ? { steps: recipe.Steps.map((s) => s.Name) } : {}
  const trees = new Map<string, ConditionAst | undefined>()
  return (text) => {
    if (trees.has(text)) return trees.get(text)
    const parsed = parseCondition(text.trim(), options)
    const ast = Result.isSuccess(parsed) ? parsed.success : undefined
    trees.set(text, ast)
    return ast
  }
}

export const indexRecipe = (recipe: Recipe): RecipeIndex => {
  const cached = cache.get(recipe)
  if (cached) return cached
  const steps = new Map(recipe.Steps.map((s) => [s.Name, s]))
  const branches = new Map((recipe.Branches ?? []).map((b) => [b.Name, b]))
  const actions = new Map(recipe.Actions.map((a) => [a.Name, a]))
  const order = new Map(recipe.Actions.map((a, i) => [a.Name, i]))
  const byStep = new Map<string, Array<Action>>()
  for (const a of recipe.Actions) byStep.set(a.Step, [...(byStep.get(a.Step) ?? []), a])
  const outgoing = new Map<string, Array<Transition & { order: number }>>()
  recipe.Transitions.forEach((t, i) => outgoing.set(t.Source, [...(outgoing.get(t.Source) ?? []), { ...t, order: i }]))
  const conditions = new Map<string, CompiledCondition>()
  const v11 = recipeSchemaVersion(recipe) === "1.1.0"
  const parse = parserOf(recipe, v11)
  const index: RecipeIndex = {
    recipe,
    v11,
    initialStep: recipe.Steps.find((s) => s.Initial)?.Name ?? recipe.Steps[0]?.Name ?? "",
    step: (name) => steps.get(name),
    branch: (name) => branches.get(name),
    actionsOf: (step) => byStep.get(step) ?? [],
    action: (name) => actions.get(name),
    actionOrder: (name) => order.get(name) ?? -1,
    outgoing: (source) => outgoing.get(source) ?? [],
    condition: (text) => {
      let compiled = conditions.get(text)
      if (!compiled) {
        compiled = compile(text, parse)
        conditions.set(text, compiled)
      }
      return compiled
    },
    parse
  }
  cache.set(recipe, index)
  return index
}

/**
 * Picks the transition to take: among those whose condition holds, the lowest Priority wins,
 * ties in recipe order. `undefined` when none holds.
 */
export const chooseTransition = <T extends { readonly Condition: string; readonly Priority: number; readonly order: number }>(
  index: RecipeIndex,
  candidates: ReadonlyArray<T>,
  results: ReadonlyArray<ActionResult>,
  context?: ConditionContext
): T | undefined =>
  [...candidates]
    .sort((a, b) => a.Priority - b.Priority || a.order - b.order)
    .find((t) => index.condition(t.Condition)(results, context))

/**
 * Whether an operator's retry takes this run: its command waiting for its reply, its event
 * awaited, or (with a Retry policy) its command waiting out the back-off before its next attempt.
 */
export const isOpenForRetry = (index: Pick<RecipeIndex, "action">, run: { readonly action: string; readonly state: string }): boolean =>
  run.state === "dispatched" || run.state === "waiting" || (run.state === "pending" && index.action(run.action)?.Retry !== undefined)
