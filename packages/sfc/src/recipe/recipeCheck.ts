import type { RecipeDraft } from "./Recipe.js"
import type { RecipeProblem, RecipeRule } from "./RecipeProblem.js"

/** One recipe rule: the problems it finds in a structurally sound recipe, in recipe order. */
export type RecipeCheck = (recipe: RecipeDraft) => ReadonlyArray<RecipeProblem>

export type Path = ReadonlyArray<string | number>

export const problem = (rule: RecipeRule, path: Path, message: string): RecipeProblem => ({ rule, path, message })

export const quote = (name: string) => JSON.stringify(name)

export const transitionLabel = (t: { Source: string; Target: string }, index: number) =>
  `transition ${index} (${quote(t.Source)} → ${quote(t.Target)})`

