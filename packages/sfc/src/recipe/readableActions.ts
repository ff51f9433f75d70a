import type { RecipeDraft } from "./Recipe.js"
import { quote } from "./recipeCheck.js"
import { stepsBeforeConverging } from "./reachability.js"

type Action = RecipeDraft["Actions"][number]

/** The actions whose results a transition's condition reads, and how to say which they are. */
export interface ReadableActions {
  readonly actions: ReadonlyArray<Action>
  /** e.g. `the actions of step "Press"`. */
  readonly described: string
  /** The same when there are none, e.g. `step "Press" has no actions`. */
  readonly none: string
}

/**
 * What the engine evaluates each transition against. Out of a step: that step's actions (this
 * visit's results). Out of a branch when it converges: every action's latest result, so the
 * actions of the steps that can have run by then. From a selection branch into one of its paths:
 * the results the branch was entered with, so the actions the transitions into the branch read.
 * A step or branch an action's `OnError` leads to is also entered with the failed step's results
 * (v1.1.0), so its transitions read that step's actions too.
 */
export const readableActions = (recipe: RecipeDraft): ((t: RecipeDraft["Transitions"][number]) => ReadableActions) => {
  const branches = new Map((recipe.Branches ?? []).map((b) => [b.Name, b]))
  const actionsOf = (steps: ReadonlySet<string>) => recipe.Actions.filter((a) => steps.has(a.Step))
  const leaving = (source: string): ReadonlySet<string> => (branches.has(source) ? stepsBeforeConverging(recipe, source) : new Set([source]))
  // The steps whose failed action leads to `target`: their results come along.
  const failingInto = (target: string) => recipe.Actions.filter((a) => a.OnError === target).map((a) => a.Step)
  return (t) => {
    const branch = branches.get(t.Source)
    if (branch === undefined) {
      return { actions: actionsOf(new Set([t.Source, ...failingInto(t.Source)])), described: `the actions of step ${quote(t.Source)}`, none: `step ${quote(t.Source)} has no actions` }
    }
    const name = quote(branch.Name)
    if (!branch.Branches.some((path) => path[0] === t.Target)) {
      return {
        actions: actionsOf(leaving(branch.Name)),
        described: `the actions that can have run when branch ${name} converges`,
        none: `no action can have run when branch ${name} converges`
      }
    }
    const entering = [...recipe.Transitions.filter((u) => u.Target === branch.Name).flatMap((u) => [...leaving(u.Source)]), ...failingInto(branch.Name)]
    return {
      actions: actionsOf(new Set(entering)),
      described: `the actions read by the transitions into branch ${name}`,
      none: `the transitions into branch ${name} read no action`
    }
  }
}
