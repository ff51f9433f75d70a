import type { Draft } from "./Draft.js"
import { type ExecutionState, isTerminalStatus } from "./ExecutionState.js"
import type { CommandEntry } from "./Outbox.js"

/**
 * Commands a Pause held back: the outbox entry of a command reached
 * its handler while the job was paused, so it was acknowledged without being sent. The handler
 * records it in the state; Resume sends exactly these again (same correlation id and attempt),
 * and nothing that already went out, so the station never gets a command twice.
 */

/** Commands sent once, whose step does not wait for them: every qualifier but N (pulses, stores, stops, delayed ones). */
const isPulse = (state: Pick<ExecutionState, "recipe">, action: string): boolean =>
  state.recipe.Actions.some((a) => a.Name === action && a.Qualifier !== "N")

/** Whether `command` is sent once and its step does not wait for it (any qualifier but N): the runtime sends it even after its step. */
export const sendsOnce = (state: Pick<ExecutionState, "recipe">, command: CommandEntry): boolean => command.attempt === 1 && isPulse(state, command.action)

/**
 * Whether `command` is the stop of a stored or limited action and the job is over, however it
 * ended: it goes out whatever state the job order is in (the MES's Stop or Abort included), so
 * no effect an action started outlives its job.
 */
export const isStopAfterEnd = (state: Pick<ExecutionState, "status">, command: CommandEntry): boolean =>
  command.stop === true && isTerminalStatus(state.status)

/**
 * Whether the execution still waits for this send: the open dispatch of this very attempt, or a
 * pulse's first send (its step does not wait for it, so the step may already be over).
 */
export const awaitsSend = (state: Pick<ExecutionState, "recipe" | "actions">, command: CommandEntry): boolean =>
  state.actions.some((r) => r.correlationId === command.correlationId && r.state === "dispatched" && r.attempts === command.attempt) ||
  (command.attempt === 1 && isPulse(state, command.action))

export const isHeld = (state: Pick<ExecutionState, "heldCommands">, command: CommandEntry): boolean =>
  (state.heldCommands ?? []).some((c) => c.correlationId === command.correlationId && c.attempt === command.attempt)

/** Records a command the handler did not send because the job is paused; why not, otherwise. */
export const holdCommand = (draft: Draft, command: CommandEntry): string | undefined => {
  if (draft.state.status !== "paused") return `execution is ${draft.state.status}, not paused: the command is not held back`
  if (command.jobId !== draft.state.jobId) return `command of job ${command.jobId} is not for this job`
  if (isHeld(draft.state, command)) return `command ${command.correlationId} attempt ${command.attempt} is already held back`
  if (!awaitsSend({ recipe: draft.state.recipe, actions: draft.actions }, command)) {
    return `no action waits for command ${command.correlationId} attempt ${command.attempt}`
  }
  draft.state.heldCommands = [...(draft.state.heldCommands ?? []), command]
  draft.touch()
  return undefined
}

/** On Resume: sends again what the Pause held back and still waits for it, and forgets the rest. */
export const releaseHeldCommands = (draft: Draft): void => {
  const held = draft.state.heldCommands ?? []
  delete draft.state.heldCommands
  for (const command of held) {
    if (awaitsSend({ recipe: draft.state.recipe, actions: draft.actions }, command)) draft.emit(command)
  }
}
