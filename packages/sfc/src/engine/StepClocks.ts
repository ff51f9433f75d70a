import { referencesIn, type StepClock } from "../condition/index.js"
import type { Draft } from "./Draft.js"
import type { ActiveStep } from "./ExecutionState.js"
import type { ConditionContext, RecipeIndex } from "./RecipeIndex.js"

/**
 * The steps' flags and times as v1.1.0 conditions read them: `Press.X` (the step is active) and
 * `Press.T` (ms of running time in its current activation; once left, its last activation's
 * length; 0 if it never ran). Paused time does not count. The state keeps only what these
 * need: the active steps' entry times (and paused time, `heldMs`), and the last length of the
 * steps whose `T` a condition reads (`stepTimes`).
 */

const cache = new WeakMap<RecipeIndex, ReadonlySet<string>>()

/** The steps whose `T` some condition of the recipe reads: only their times are kept. */
export const timedSteps = (index: RecipeIndex): ReadonlySet<string> => {
  let steps = cache.get(index)
  if (steps === undefined) {
    const timed = new Set<string>()
    for (const t of index.recipe.Transitions) {
      const ast = index.v11 ? index.parse(t.Condition) : undefined
      for (const ref of ast === undefined ? [] : referencesIn(ast)) if (ref._tag === "StepFlag" && ref.flag === "T") timed.add(ref.step)
    }
    cache.set(index, (steps = timed))
  }
  return steps
}

/** The running time of an active step at `now`. */
export const elapsedOf = (active: ActiveStep, now: number): number => now - active.enteredAt - (active.heldMs ?? 0)

const stepClockOf = (draft: Draft): StepClock => ({
  isActive: (step) => draft.active.some((a) => a.step === step),
  elapsedMs: (step) => {
    const active = draft.active.find((a) => a.step === step)
    return active !== undefined ? elapsedOf(active, draft.now) : (draft.state.stepTimes?.[step] ?? 0)
  }
})

/** What a condition reads besides results and counters: v1.1.0's steps and job order; nothing in v1.0.0. */
export const conditionContext = (draft: Draft): ConditionContext | undefined =>
  draft.index.v11 ? { steps: stepClockOf(draft), order: draft.state.order } : undefined

/** A step is left: the length of this activation, when a condition reads its `T`. */
export const recordStepTime = (draft: Draft, active: ActiveStep): void => {
  if (!timedSteps(draft.index).has(active.step)) return
  draft.state.stepTimes = { ...draft.state.stepTimes, [active.step]: elapsedOf(active, draft.now) }
}

/** Resume: the pause does not count in the times of the active steps whose `T` conditions read. */
export const holdStepTimes = (draft: Draft): void => {
  const pausedAt = draft.state.pausedAt
  const timed = timedSteps(draft.index)
  if (pausedAt === undefined || timed.size === 0) return
  draft.active = draft.active.map((a) => (timed.has(a.step) ? { ...a, heldMs: (a.heldMs ?? 0) + draft.now - pausedAt } : a))
}
