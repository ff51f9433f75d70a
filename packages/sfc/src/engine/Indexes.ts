import { type ExecutionState, isTerminalStatus } from "./ExecutionState.js"
import { indexRecipe } from "./RecipeIndex.js"
import { nextCheckOf } from "./Waiting.js"
import { timedDue } from "./TimedCommands.js"
import { waitChanges, waitsIndexOf } from "./Waits.js"

/**
 * The runtime's indexes of a job as its state implies them: the due index (the earliest
 * deadline, time limit or check of a waiting step), the waits (which event types the job waits
 * for, since when, by type or by correlation key: Waits.ts) and the active set.
 */

export type { WaitChange } from "./Waits.js"

/**
 * When a running state is next due (epoch ms), or null: its earliest action deadline, step or
 * job time limit, or (v1.1.0) the next check of a waiting step's transitions, or the end of a
 * qualifier's delay or time limit.
 */
export const dueOf = (state: ExecutionState): number | null => {
  if (state.status !== "running") return null
  let due = Math.min(state.jobLimitAt ?? Infinity, timedDue(state))
  for (const run of state.actions) if (run.deadline !== undefined && run.deadline < due) due = run.deadline
  for (const active of state.active) if (active.limitAt !== undefined && active.limitAt < due) due = active.limitAt
  const check = nextCheckOf(state, indexRecipe(state.recipe))
  if (check !== undefined && check < due) due = check
  return due === Infinity ? null : due
}

/** The indexes a state implies (due, waits, active): what reconcile compares against Valkey. */
export const indexesOf = (state: ExecutionState) => ({
  due: dueOf(state),
  ...waitsIndexOf(state),
  active: !isTerminalStatus(state.status)
})

/** What the runtime's indexes (due, waits, active) change by from `before` (none at start) to `state`. */
export const indexChanges = (before: ExecutionState | undefined, state: ExecutionState) => ({
  due: dueOf(state),
  ...waitChanges(before, state),
  active: !isTerminalStatus(state.status)
})
