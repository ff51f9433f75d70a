import { Result } from "effect"
import { evaluateCondition, parseCondition } from "../condition/index.js"
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

export type CompiledCondition = (results: ReadonlyArray<ActionResult>) => boolean

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
}

const cache = new WeakMap<Recipe, RecipeIndex>()

const alwaysTrue: CompiledCondition = () => true
const alwaysFalse: CompiledCondition = () => false

const compile = (text: string): CompiledCondition => {
  const trimmed = text.trim()
  if (trimmed === "" || trimmed === "true" || trimmed === "always") return alwaysTrue
  const parsed = parseCondition(trimmed)
  // Validation refuses recipes whose conditions do not parse; a snapshot that still has one
  // (a recipe stored before a grammar change) treats it as never true, and the job fails visibly.
  if (Result.isFailure(parsed)) return alwaysFalse
  const ast = parsed.success
  return (results) => evaluateCondition(ast, { results }) === true
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
  const index: RecipeIndex = {
    recipe,
    v11: recipeSchemaVersion(recipe) === "1.1.0",
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
        compiled = compile(text)
        conditions.set(text, compiled)
      }
      return compiled
    }
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
  results: ReadonlyArray<ActionResult>
): T | undefined =>
  [...candidates]
    .sort((a, b) => a.Priority - b.Priority || a.order - b.order)
    .find((t) => index.condition(t.Condition)(results))
