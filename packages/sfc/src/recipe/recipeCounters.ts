import { Result } from "effect"
import { countersIn } from "../condition/conditionCounters.js"
import { parseCondition } from "../condition/parseCondition.js"

/** What the counter helpers read of a recipe (a `Recipe` or the draft validation works on). */
interface WithTransitions {
  readonly Transitions: ReadonlyArray<{ readonly Source: string; readonly Condition: string }>
}

/** The counters one condition text names; none for a condition that does not parse. */
export const countersOfCondition = (condition: string): ReadonlyArray<string> => {
  const parsed = parseCondition(condition)
  return Result.isSuccess(parsed) ? countersIn(parsed.success) : []
}

/**
 * The counters the outgoing transitions of each source (step or branch) name, each once, in
 * recipe order: what the runtime reads before that source's transitions are evaluated. Sources
 * whose transitions name none are absent, so a recipe without counters gives an empty map.
 */
export const countersBySource = (recipe: WithTransitions): ReadonlyMap<string, ReadonlyArray<string>> => {
  const bySource = new Map<string, Set<string>>()
  for (const t of recipe.Transitions) {
    const names = countersOfCondition(t.Condition)
    if (names.length === 0) continue
    const set = bySource.get(t.Source) ?? new Set<string>()
    for (const name of names) set.add(name)
    bySource.set(t.Source, set)
  }
  return new Map([...bySource].map(([source, names]) => [source, [...names]]))
}

/** Every counter a recipe's conditions name, each once, in recipe order. */
export const countersOf = (recipe: WithTransitions): ReadonlyArray<string> => [
  ...new Set(recipe.Transitions.flatMap((t) => countersOfCondition(t.Condition)))
]
