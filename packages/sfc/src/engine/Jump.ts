import type { Draft } from "./Draft.js"
import type { ActiveStep } from "./ExecutionState.js"
import { enterTarget, leaveStep, resultsOf } from "./Flow.js"
import { logBranchClosed, logPathEnded } from "./LogNodes.js"

/**
 * Leaving a step other than by its transitions: its time limit ran out (`OnMaxDuration`). A step
 * on a branch path cannot leave its branch alone, so the whole branch is left: every path still
 * running stops (its child execution in the log ends `stopped`).
 */

/** Leaves the branch `name`: its active steps, its running paths and the branch itself. */
const leaveBranch = (draft: Draft, name: string): void => {
  for (const active of draft.active.filter((a) => a.branch?.name === name)) leaveStep(draft, active)
  const at = draft.branches.findIndex((b) => b.name === name)
  if (at < 0) return
  const run = draft.branches[at]!
  for (const path of run.runningPaths) logPathEnded(draft, run, path, "stopped")
  logBranchClosed(draft, run)
  draft.branches.splice(at, 1)
}

/** Leaves `active` (or its branch) and enters `target`, a step or branch, with the step's results. */
export const jumpOut = (draft: Draft, active: ActiveStep, target: string): void => {
  const results = resultsOf(draft, draft.actions.filter((r) => r.step === active.step && r.visit === active.visit))
  if (active.branch === undefined) leaveStep(draft, active)
  else leaveBranch(draft, active.branch.name)
  enterTarget(draft, target, results)
}
