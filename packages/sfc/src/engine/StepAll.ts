import { counterStop, type EngineInput, type EngineOutput, stepOnce } from "./Engine.js"
import { indexChanges } from "./Indexes.js"
import type { LogWrite } from "./ExecutionLog.js"
import type { ExecutionState } from "./ExecutionState.js"
import type { OutboxEntry } from "./Outbox.js"
import { CounterReadings, CountersNeeded, type CounterValues } from "./TransitionCounters.js"

/**
 * Several inputs of one job in one core call, for one write of the job: the fold of `step` over
 * the inputs (each on the state the one before left), so batching a job's inputs changes nothing
 * they do. Each input still gets its own draft: its revision, log sequence and loop check are
 * exactly those of a `step` of its own.
 */

export interface StepAllOutput {
  /**
   * What one write of the job stores: the state after the last input; outbox and log the
   * concatenation of the inputs'; due, waits and active from the state before the first input to
   * the last state; `changed` when any input changed the state; `needsCounters` as `step` has it.
   * No `note`: notes are per input.
   */
  readonly output: EngineOutput
  /** One per input, in order: whether it changed the state, its note, its own outbox entries and log writes. */
  readonly perInput: ReadonlyArray<{
    readonly changed: boolean
    readonly note?: string
    readonly outbox: ReadonlyArray<OutboxEntry>
    readonly log: ReadonlyArray<LogWrite>
  }>
}

const fold = (state: ExecutionState, inputs: ReadonlyArray<EngineInput>, now: number, freshExecutionId: string | undefined, readings: CounterReadings): StepAllOutput => {
  const outbox: Array<OutboxEntry> = []
  const log: Array<LogWrite> = []
  const perInput: Array<StepAllOutput["perInput"][number]> = []
  let current = state
  for (const input of inputs) {
    // Like `step` called per input with the same id: the id takes effect only while the state has
    // no log, so the first input that changes the state opens the log and later ones keep it.
    const out = stepOnce(current, input, now, freshExecutionId, readings)
    current = out.state
    outbox.push(...out.outbox)
    log.push(...out.log)
    perInput.push({ changed: out.changed, ...(out.note !== undefined ? { note: out.note } : {}), outbox: out.outbox, log: out.log })
  }
  const changed = perInput.some((r) => r.changed)
  return { output: { state: current, changed, outbox, ...indexChanges(state, current), log }, perInput }
}

/**
 * Applies the inputs in order. `counters` are the values of the whole call in evaluation order:
 * one cursor over all inputs, so the runtime's loop (call, read what `needsCounters` names,
 * append, call again) is the one it runs for `step`. When any input needs counters the whole call
 * changes nothing, like `step`: the next call, with the values, runs the batch from its start.
 */
export const stepAll = (
  state: ExecutionState,
  inputs: ReadonlyArray<EngineInput>,
  now: number,
  freshExecutionId?: string,
  counters: ReadonlyArray<CounterValues> = []
): StepAllOutput => {
  try {
    return fold(state, inputs, now, freshExecutionId, new CounterReadings(counters))
  } catch (error) {
    if (!(error instanceof CountersNeeded)) throw error
    return { output: counterStop(state, now, error.need), perInput: inputs.map(() => ({ changed: false, outbox: [], log: [] })) }
  }
}
