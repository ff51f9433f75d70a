import { durationMs } from "../recipe/Duration.js"
import { DELAYED, LIMITED, STOPPED } from "../recipe/QualifierSchema.js"
import type { Recipe } from "../recipe/Recipe.js"
import { correlationIdOf } from "./Correlation.js"
import type { Draft } from "./Draft.js"
import type { ActionRun, ActiveStep, TimedCommand } from "./ExecutionState.js"
import { logInstant } from "./LogNodes.js"
import type { CommandEntry } from "./Outbox.js"

/**
 * What the v1.1.0 qualifiers (QualifierSchema.ts) do with a push command at step entry, step exit
 * and the job's end. Every command, stops included, is an ordinary outbox command entry sent once
 * (attempt 1); the timers of delays and limits live in the state's `timed` list (TimedCommands.ts).
 */

type Action = Recipe["Actions"][number]

/** A stop's correlation id: its own, so its reply is not taken for the action's. */
export const stopCorrelationId = (jobId: string, action: string, visit: number): string => correlationIdOf(jobId, `${action}#stop`, visit)

export const commandOf = (draft: Draft, action: Action, correlationId: string, stop = false): CommandEntry => {
  const typeId = stop ? action.Stop!.TypeId : action.TypeId
  const parameters = (stop ? action.Stop!.Parameters : action.Parameters) ?? {}
  const command: CommandEntry = { type: "command", jobId: draft.state.jobId, action: action.Name, correlationId, typeId, parameters, subject: draft.state.scope, attempt: 1 }
  return stop ? { ...command, stop: true } : command
}

/** The stop of a command that is on: sent under the stored action's name (the R action's own, for a reset). */
export const sendStop = (draft: Draft, entry: TimedCommand, by?: { readonly action: Action; readonly correlationId: string }): void => {
  const action = draft.index.action(entry.action)!
  const command = commandOf(draft, action, stopCorrelationId(draft.state.jobId, action.Name, entry.visit), true)
  logInstant(draft, "stop", action.Name, { typeId: command.typeId, ...(by ? { by: by.action.Name } : {}) })
  draft.emit(by ? { ...command, action: by.action.Name, correlationId: by.correlationId } : command)
}

const timed = (draft: Draft): Array<TimedCommand> => [...(draft.state.timed ?? [])]

/** The list without `action`'s entry: an action has at most one (a step entered again sets it anew, as IEC's S does). */
const without = (draft: Draft, action: string): Array<TimedCommand> => timed(draft).filter((t) => t.action !== action)

export const setTimed = (draft: Draft, list: ReadonlyArray<TimedCommand>): void => {
  if (list.length > 0) draft.state.timed = list
  else delete draft.state.timed
  draft.touch()
}

/**
 * A v1.1.0 push command at its step's entry: the run it adds for the step (undefined: none, P0)
 * and what it sends or schedules. N and P are Flow.ts's own.
 */
export const enterQualified = (draft: Draft, action: Action, step: string, visit: number): ActionRun | undefined => {
  const correlationId = correlationIdOf(draft.state.jobId, action.Name, visit)
  const run: ActionRun = { action: action.Name, step, visit, state: "dispatched", correlationId, attempts: 1 }
  const q = action.Qualifier
  if (q === "P0") return undefined
  if (q === "R") return reset(draft, action, run)
  if (DELAYED.has(q)) {
    setTimed(draft, [...without(draft, action.Name), { action: action.Name, visit, phase: "delay", at: draft.now + durationMs(action.Delay)! }])
    return { ...run, state: "pending", attempts: 0 }
  }
  draft.emit(commandOf(draft, action, correlationId))
  if (STOPPED.has(q)) {
    const limit = LIMITED.has(q) ? { at: draft.now + durationMs(action.Limit)! } : {}
    setTimed(draft, [...without(draft, action.Name), { action: action.Name, visit, phase: "on", ...limit }])
  }
  return run
}

/** R: sends the stop of the stored action it resets if it is on; one still delayed is cancelled. */
const reset = (draft: Draft, action: Action, run: ActionRun): ActionRun => {
  const list = timed(draft)
  const at = list.findIndex((t) => t.action === action.Resets)
  if (at < 0) {
    logInstant(draft, "stop", action.Resets!, { by: action.Name, note: "not active: nothing to stop" })
    return { ...run, state: "completed", attempts: 0, result: null }
  }
  const [entry] = list.splice(at, 1)
  setTimed(draft, list)
  if (entry!.phase === "delay") return { ...run, state: "completed", attempts: 0, result: null }
  sendStop(draft, entry!, { action, correlationId: run.correlationId! })
  return run
}

/**
 * A step left while the job runs: its P0 pulses go out, its L commands stop, and its D and DS
 * commands that still wait for their delay are dropped (SD ones stay: they are sent anyway).
 */
export const leftQualified = (draft: Draft, active: ActiveStep): void => {
  if (draft.state.status !== "running" || !draft.index.v11) return
  const ofVisit = (t: TimedCommand) => draft.index.action(t.action)?.Step === active.step && t.visit === active.visit
  const list = timed(draft)
  const kept = list.filter((t) => {
    if (!ofVisit(t)) return true
    const q = draft.index.action(t.action)!.Qualifier
    if (q === "L" && t.phase === "on") sendStop(draft, t)
    return !(q === "L" || (t.phase === "delay" && (q === "D" || q === "DS")))
  })
  if (kept.length !== list.length) setTimed(draft, kept)
  for (const action of draft.index.actionsOf(active.step)) {
    if (action.Qualifier === "P0") draft.emit(commandOf(draft, action, correlationIdOf(draft.state.jobId, action.Name, active.visit)))
  }
}

/** The job ends: every command still on is stopped, and delayed ones are never sent. */
export const endQualified = (draft: Draft): void => {
  const list = draft.state.timed ?? []
  if (list.length === 0) return
  for (const entry of list) if (entry.phase === "on") sendStop(draft, entry)
  setTimed(draft, [])
}
