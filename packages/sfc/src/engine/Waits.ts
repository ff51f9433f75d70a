import { type ExecutionState, isTerminalStatus } from "./ExecutionState.js"
import { type KeyedWait, type KeyedWaitChange, keyedWaitsOf, type WaitKey, waitsByKey } from "./KeyedWaits.js"

/**
 * The waits a state implies and how they change: what the runtime's CAS writes into the store's
 * waits sets (by type, longest waiting first) and keyed waits (by correlation key).
 */

export interface WaitChange {
  readonly typeId: string
  readonly since: number
  /** Set on a wait by correlation key (KeyedWaits.ts): where the key is and the value the job expects. */
  readonly key?: WaitKey
}

/** The part of the engine's output that changes the waits. */
export interface WaitChanges {
  readonly waitsAdd: ReadonlyArray<WaitChange>
  /**
   * Waits sets the job stays in with a later wait start: its earliest wait for the type ended
   * and a newer one is open, so the job goes behind the jobs that have waited longer.
   */
  readonly waitsMove: ReadonlyArray<WaitChange>
  readonly waitsRemove: ReadonlyArray<string>
  /** Keyed waits the job joins, stays in with a later start, and leaves: as the by-type ones. */
  readonly keyedWaitsAdd: ReadonlyArray<KeyedWaitChange>
  readonly keyedWaitsMove: ReadonlyArray<KeyedWaitChange>
  readonly keyedWaitsRemove: ReadonlyArray<KeyedWait>
}

/** The pull-event types a state waits on by type (not by key), each with its earliest wait start. */
const waitsOf = (state: ExecutionState): Map<string, number> => {
  const waits = new Map<string, number>()
  if (isTerminalStatus(state.status)) return waits
  for (const run of state.actions) {
    if (run.state !== "waiting" || waitsByKey(state, run.action)) continue
    const typeId = state.recipe.Actions.find((a) => a.Name === run.action)?.TypeId
    if (typeId !== undefined) waits.set(typeId, Math.min(waits.get(typeId) ?? Infinity, run.waitSince ?? 0))
  }
  return waits
}

/** The waits of a state (what reconcile compares against the store). */
export const waitsIndexOf = (state: ExecutionState) => ({
  waits: [...waitsOf(state)].map(([typeId, since]): WaitChange => ({ typeId, since })),
  keyedWaits: [...keyedWaitsOf(state).values()]
})

/** What the waits change by from `before` (none at start) to `state`. */
export const waitChanges = (before: ExecutionState | undefined, state: ExecutionState): WaitChanges => {
  const oldWaits = before ? waitsOf(before) : new Map<string, number>()
  const newWaits = waitsOf(state)
  const changes = [...newWaits].map(([typeId, since]) => ({ typeId, since }))
  const oldKeyed = before ? keyedWaitsOf(before) : new Map<string, KeyedWaitChange>()
  const newKeyed = keyedWaitsOf(state)
  return {
    waitsAdd: changes.filter((w) => !oldWaits.has(w.typeId)),
    // A wait that ends and restarts in one write keeps the type: without the move the job
    // would keep its old place and take events from jobs that have waited longer.
    waitsMove: changes.filter((w) => oldWaits.has(w.typeId) && oldWaits.get(w.typeId) !== w.since),
    waitsRemove: [...oldWaits.keys()].filter((t) => !newWaits.has(t)),
    keyedWaitsAdd: [...newKeyed].filter(([id]) => !oldKeyed.has(id)).map(([, wait]) => wait),
    keyedWaitsMove: [...newKeyed].filter(([id, wait]) => oldKeyed.has(id) && oldKeyed.get(id)!.since !== wait.since).map(([, wait]) => wait),
    keyedWaitsRemove: [...oldKeyed].filter(([id]) => !newKeyed.has(id)).map(([, { typeId, key }]): KeyedWait => ({ typeId, key }))
  }
}
