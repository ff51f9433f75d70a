/** What reachability needs of a recipe: names and edges only, so any recipe-shaped value fits. */
export interface RecipeGraph {
  /** `OnMaxDuration`: where a step goes when its time limit runs out, an edge like a transition's. */
  readonly Steps: ReadonlyArray<{ readonly Name: string; readonly OnMaxDuration?: string | undefined }>
  readonly Transitions: ReadonlyArray<{ readonly Source: string; readonly Target: string }>
  readonly Branches?: ReadonlyArray<{ readonly Name: string; readonly Branches: ReadonlyArray<ReadonlyArray<string>> }>
  /** An action's `OnError` is an edge from its step to that target. */
  readonly Actions?: ReadonlyArray<{ readonly Step: string; readonly OnError?: string | undefined }>
}

/**
 * The steps that can become active starting from the `start` steps. Transitions are edges (and a
 * step's `OnMaxDuration`, which a step on a branch path takes out of the branch, and an action's
 * `OnError`); entering a
 * branch reaches the first step of each path, each path's steps follow in order, and the branch's
 * own outgoing transitions are followed once its paths are entered. References to elements that do
 * not exist are ignored here (they are reported elsewhere).
 */
export const reachableSteps = (recipe: RecipeGraph, start: Iterable<string>): ReadonlySet<string> => {
  const next = new Map<string, Array<string>>()
  const edge = (from: string, to: string) => next.set(from, [...(next.get(from) ?? []), to])
  for (const transition of recipe.Transitions) edge(transition.Source, transition.Target)
  for (const action of recipe.Actions ?? []) if (action.OnError !== undefined) edge(action.Step, action.OnError)
  for (const step of recipe.Steps) if (step.OnMaxDuration !== undefined) edge(step.Name, step.OnMaxDuration)
  for (const branch of recipe.Branches ?? []) {
    for (const path of branch.Branches) {
      path.forEach((step, index) => edge(index === 0 ? branch.Name : path[index - 1]!, step))
    }
  }
  const steps = new Set(recipe.Steps.map((step) => step.Name))
  const seen = new Set<string>(start)
  const queue = [...seen]
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    for (const target of next.get(node) ?? []) {
      if (seen.has(target)) continue
      seen.add(target)
      queue.push(target)
    }
  }
  return new Set([...seen].filter((name) => steps.has(name)))
}

/**
 * The steps that can have run before `branch` converges: its paths' steps and every step from
 * which the branch can be reached (loops included). A branch's transitions out of it read the
 * latest result of each action, so these steps' actions are the ones they can read.
 */
export const stepsBeforeConverging = (recipe: RecipeGraph, branch: string): ReadonlySet<string> => {
  const previous = new Map<string, Array<string>>()
  const edge = (from: string, to: string) => previous.set(to, [...(previous.get(to) ?? []), from])
  for (const transition of recipe.Transitions) edge(transition.Source, transition.Target)
  for (const b of recipe.Branches ?? []) {
    for (const path of b.Branches) {
      path.forEach((step, index) => edge(index === 0 ? b.Name : path[index - 1]!, step))
      // A path's last step leads to its branch's convergence.
      if (path.length > 0) edge(path[path.length - 1]!, b.Name)
    }
  }
  const steps = new Set(recipe.Steps.map((step) => step.Name))
  const seen = new Set<string>([branch])
  const queue = [branch]
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    for (const source of previous.get(node) ?? []) {
      if (seen.has(source)) continue
      seen.add(source)
      queue.push(source)
    }
  }
  return new Set([...seen].filter((name) => steps.has(name)))
}
