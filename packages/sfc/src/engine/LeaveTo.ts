import type { Draft } from "./Draft.js"
import { withCarried } from "./CarriedResults.js"
import type { ActionRun, ActiveStep } from "./ExecutionState.js"
import { enterTarget, leaveStep, settle } from "./Flow.js"
import { logInstant } from "./LogNodes.js"
import type { ActionResult } from "./RecipeIndex.js"

/**
 * Leaving a step for a target the recipe names outside the step's transitions (an action's
 * `OnError`): the step is left as by a transition, whatever its other actions are doing, and the
 * target (a step, or a branch) is entered in the same write.
 */

/** What a run leaves for conditions: its result once it completed, or the error result of a failed one. */
const resultsLeft = (draft: Draft, runs: ReadonlyArray<ActionRun>): Array<ActionResult> =>
  runs
    .filter((r) => r.result !== undefined && (r.state === "completed" || r.state === "failed"))
    .sort((a, b) => draft.index.actionOrder(a.action) - draft.index.actionOrder(b.action))
    .map((r) => ({ action: r.action, result: r.result }))

/**
 * Leaves `active` for `target`. The step's results (what it carried in first, then its own runs',
 * an error result included) choose a selection branch's path, and a step entered here carries
 * them, so its transitions read them too. `detail` goes into the transition's log node.
 */
export const leaveTo = (draft: Draft, active: ActiveStep, target: string, detail?: Readonly<Record<string, unknown>>): void => {
  const runs = leaveStep(draft, active)
  const results = withCarried(active, resultsLeft(draft, runs))
  logInstant(draft, "transition", `${active.step} -> ${target}`, detail)
  const before = new Set(draft.active)
  enterTarget(draft, target, results)
  if (results.length > 0) draft.active = draft.active.map((a) => (before.has(a) ? a : { ...a, carried: [...results] }))
  settle(draft)
}
