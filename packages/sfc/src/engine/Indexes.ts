import { type ExecutionState, isTerminalStatus } from "./ExecutionState.js"
import { indexRecipe } from "./RecipeIndex.js"
import { nextCheckOf } from "./Waiting.js"

/**
 * The runtime's indexes of a job as its state implies them: the due index (the earliest
 * deadline, time limit or check of a waiting step), the waits sets (which event types the job
 * waits for, since when) and the active set.
 */

/** A pull-event type a job waits for, with the start of its oldest open wait. */
export interface WaitChange {
  readonly typeId: string
  readonly since: number
}

/** The pull-event types a state waits on, each with its earliest wait start. */
const waitsOf = (state: ExecutionState): Map<string, number> => {
  const waits = new Map<string, number>()
  if (isTerminalStatus(state.status)) return waits
  for (const run of state.actions) {
    if (run.state !== "waiting") continue
    const typeId = state.recipe.Actions.find((a) => a.Name === run.action)?.TypeId
    if (typeId !== undefined) waits.set(typeId, Math.min(waits.get(typeId) ?? Infinity, run.waitSince ?? 0))
  }
  return waits
}

/**
 * When a running state is next due (epoch ms), or null: its earliest action deadline, step or
 * job time limit, or (v1.1.0) the next check of a waiting step's transitions.
 */
export const dueOf = (state: ExecutionState): number | null => {
  if (state.status !== "running") return null
  let due = state.jobLimitAt ?? Infinity
  for (const run of state.actions) if (run.deadline !== undefined && run.deadline < due) due = run.deadline
  for (const active of state.active) if (active.limitAt !== undefined && active.limitAt < due) due = active.limitAt
  const check = nextCheckOf(state, indexRecipe(state.recipe))
  if (check !== undefined && check < due) due = check
  return due === Infinity ? null : due
}

/** The indexes a state implies (due, waits, active): what reconcile compares against Valkey. */
export const indexesOf = (state: ExecutionState) => ({
  due: dueOf(state),
  waits: [...waitsOf(state)].map(([typeId, since]) => ({ typeId, since })),
  active: !isTerminalStatus(state.status)
})

/** What the runtime's indexes (due, waits, active) change by from `before` (none at start) to `state`. */
export const indexChanges = (before: ExecutionState | undefined, state: ExecutionState) => {
  const oldWaits = before ? waitsOf(before) : new Map<string, number>()
  const newWaits = waitsOf(state)
  const changes = [...newWaits].map(([typeId, since]) => ({ typeId, since }))
  return {
    due: dueOf(state),
    waitsAdd: changes.filter((w) => !oldWaits.has(w.typeId)),
    // A wait that ends and restarts in one write keeps the type: without the move the job
    // would keep its old place and take events from jobs that have waited longer.
    waitsMove: changes.filter((w) => oldWaits.has(w.typeId) && oldWaits.get(w.typeId) !== w.since),
    waitsRemove: [...oldWaits.keys()].filter((t) => !newWaits.has(t)),
    active: !isTerminalStatus(state.status)
  }
}
