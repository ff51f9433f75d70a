import type { Draft } from "./Draft.js"
import type { ExecutionState, TimedCommand } from "./ExecutionState.js"
import { logActionWritten, logInstant } from "./LogNodes.js"
import { commandOf, sendStop, setTimed } from "./QualifiedCommands.js"
import { correlationIdOf } from "./Correlation.js"

/**
 * The clocks of the delayed and time-limited qualifiers (v1.1.0: D, SD, DS, L, SL). Each `at` is a
 * deadline like an action's: in the due index, frozen while the job is paused (what is left is
 * kept and runs again on Resume), and moved back by the outage grace when it fell inside an outage.
 */

/** The earliest delay or limit of a state (epoch ms), or Infinity. */
export const timedDue = (state: Pick<ExecutionState, "timed">): number => {
  let due = Infinity
  for (const t of state.timed ?? []) if (t.at !== undefined && t.at < due) due = t.at
  return due
}

const mapTimed = (draft: Draft, change: (t: TimedCommand) => TimedCommand): void => {
  const list = draft.state.timed
  if (list === undefined) return
  const next = list.map(change)
  if (next.some((t, i) => t !== list[i])) setTimed(draft, next)
}

/** Pause: each delay and limit keeps what is left of it. */
export const pauseTimed = (draft: Draft): void =>
  mapTimed(draft, (t) => {
    if (t.at === undefined) return t
    const { at, ...rest } = t
    return { ...rest, leftMs: Math.max(0, at - draft.now) }
  })

/** Resume: each frozen delay and limit runs again with what was left of it. */
export const resumeTimed = (draft: Draft): void =>
  mapTimed(draft, (t) => {
    if (t.leftMs === undefined) return t
    const { leftMs, ...rest } = t
    return { ...rest, at: draft.now + leftMs }
  })

/** Outage grace: a delay or limit that ran out inside `(from, to]` moves back by its length. */
export const shiftTimed = (draft: Draft, from: number, to: number): void =>
  mapTimed(draft, (t) => (t.at !== undefined && t.at > from && t.at <= to ? { ...t, at: t.at + to - from } : t))

/**
 * A tick: each delay that ended sends its command (a stored one then stays on), each limit that
 * ran out sends its stop. A D or DS command whose step was left is no longer in the list.
 */
export const fireTimed = (draft: Draft): void => {
  if (draft.state.status !== "running") return
  const list = draft.state.timed ?? []
  const due = list.filter((t) => t.at !== undefined && t.at <= draft.now)
  if (due.length === 0) return
  const kept = list.flatMap((t): ReadonlyArray<TimedCommand> => {
    if (!due.includes(t)) return [t]
    if (t.phase === "on") {
      sendStop(draft, t)
      return []
    }
    sendDelayed(draft, t)
    const { at: _at, ...on } = t
    return draft.index.action(t.action)!.Qualifier === "D" ? [] : [{ ...on, phase: "on" }]
  })
  setTimed(draft, kept)
}

/** A delay ended: the command goes out, and the step's run (if its step is still active) waits for the reply. */
const sendDelayed = (draft: Draft, t: TimedCommand): void => {
  const action = draft.index.action(t.action)!
  const correlationId = correlationIdOf(draft.state.jobId, action.Name, t.visit)
  const at = draft.actions.findIndex((r) => r.action === action.Name && r.visit === t.visit && r.state === "pending")
  logInstant(draft, "event", `${action.Name}.delay`, { delay: action.Delay }, { visit: t.visit })
  if (at >= 0) {
    draft.updateAction(at, { state: "dispatched", attempts: 1 })
    logActionWritten(draft, at, false)
  }
  draft.emit(commandOf(draft, action, correlationId))
}
