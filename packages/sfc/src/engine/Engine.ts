import { Draft } from "./Draft.js"
import { type ExecutionState, isTerminalStatus } from "./ExecutionState.js"
import { failAction, leaveOnError, retryAfterError, retryAfterTimeout, timeoutSpends, timeoutWhy } from "./ActionFailure.js"
import { indexChanges } from "./Indexes.js"
import { enterStep, failJob, settle } from "./Flow.js"
import { holdCommand } from "./HeldCommands.js"
import { abort, intervene, type InterventionInput, pause, resume, stop } from "./Interventions.js"
import { type CounterNeed, CounterReadings, CountersNeeded, type CounterValues } from "./TransitionCounters.js"
import type { LogWrite } from "./ExecutionLog.js"
import { runForEvent, startKeys } from "./KeyedWaits.js"
import { fireJobLimit, fireStepLimits } from "./LimitsRunOut.js"
import { logActionWritten, logInstant } from "./LogNodes.js"
import { applyOrder, orderKept } from "./OrderFields.js"
import { indexRecipe } from "./RecipeIndex.js"
import { jobLimit, pauseClocks, resumeClocks, shiftLimits } from "./TimeLimits.js"
import { fireTimed, shiftTimed } from "./TimedCommands.js"
import { endChildren } from "./SubRecipes.js"
import type { SubRecipeParent } from "./ExecutionState.js"
import { counterRecheck, markDueRecheck } from "./Waiting.js"
import type { CommandEntry, OutboxEntry } from "./Outbox.js"
import type { Recipe } from "../recipe/Recipe.js"
import type { WaitChanges } from "./Waits.js"
import type { Origin } from "@microdcs/job-state"

/**
 * The pure engine core: (state, input, now) → (new state, outbox entries, next
 * deadline, wait changes, active flag). It knows nothing of Valkey; the runtime writes its output
 * with the one CAS script.
 */

export type EngineInput =
  /** A station reply (by correlation id) or event (by type), with its data or an error; `attributes` (extensions too) may hold its correlation key. */
  | { readonly type: "event"; readonly correlationId?: string; readonly eventType?: string; readonly data?: unknown; readonly error?: string; readonly attributes?: Readonly<Record<string, string>> }
  /** The timer sweep found the job due. */
  | { readonly type: "tick" }
  /** Outage grace: deadlines in (from, to] move back by `to - from`. */
  | { readonly type: "outage"; readonly from: number; readonly to: number }
  /** From outside the recipe (Interventions.ts): `origin` is who sent it, named in its log node. */
  | { readonly type: "pause"; readonly origin?: Origin | undefined }
  /** The handler did not send this command because the job is paused: Resume sends it. */
  | { readonly type: "hold"; readonly command: CommandEntry }
  | { readonly type: "resume"; readonly origin?: Origin | undefined }
  | { readonly type: "stop"; readonly origin?: Origin | undefined }
  /** `reason` (default: "aborted by {origin}", without one "aborted by the MES") is the job's error. */
  | { readonly type: "abort"; readonly reason?: string; readonly origin?: Origin | undefined }
  /** An operator's audited intervention: skip-step, force-transition, set-result, retry (InterventionInput.ts). */
  | InterventionInput
  /** The job order was updated: its fields conditions read (v1.1.0 `order.*`, OrderFields.ts). */
  | { readonly type: "order"; readonly order: unknown }

export type { WaitChange } from "./Waits.js"

export interface EngineOutput extends WaitChanges {
  readonly state: ExecutionState
  /** False when the input changed nothing (an event for no waiting action, a tick too early). */
  readonly changed: boolean
  readonly outbox: ReadonlyArray<OutboxEntry>
  /** The earliest open deadline (epoch ms), or null. */
  readonly due: number | null
  /** False once the execution is terminal: the job leaves `sfc:active`. */
  readonly active: boolean
  /** Why an input was ignored, for the log. */
  readonly note?: string
  /**
   * Set when the call stopped at transitions that name counters it has no values for: nothing
   * changed, and the runtime reads these counters and calls again (TransitionCounters.ts).
   */
  readonly needsCounters?: CounterNeed
  /**
   * The execution log's writes of this call, in order: the runtime queues
   * them after its CAS succeeded. Empty when nothing changed or the state has no log.
   */
  readonly log: ReadonlyArray<LogWrite>
}

export interface StartParams {
  readonly jobId: string
  readonly scope: string
  readonly workMasterId: string
  readonly recipe: Recipe
  /** Where the runtime stored the recipe (see `ExecutionState.recipeDigest`). */
  readonly recipeDigest?: string | undefined
  /** Sends of one push command before it fails (default 3). */
  readonly maxAttempts?: number
  /**
   * The id of the execution in the execution log, chosen by the runtime (fresh per start, never
   * the job id alone). Absent: the state has no log.
   */
  readonly executionId?: string | undefined
  /**
   * The job order as the MES sent it (its `JobOrder`): what `order.` and `parameter.` correlation
   * keys read at start, and the fields v1.1.0 conditions read (`order.*`), which the state keeps.
   */
  readonly order?: unknown
  /** v1.1.0: how often a waiting step's counters are read again (default `COUNTER_RECHECK_MS`). */
  readonly counterRecheckMs?: number | undefined
  /** v1.1.0: a sub-recipe's child execution: where its end goes; it moves no job order (SubRecipes.ts). */
  readonly parent?: SubRecipeParent | undefined
}

export const DEFAULT_MAX_ATTEMPTS = 3

const output = (before: ExecutionState | undefined, draft: Draft, note?: string): EngineOutput => {
  const state = draft.finish()
  return { state, changed: draft.changed, outbox: draft.outbox, ...indexChanges(before, state), ...(note !== undefined ? { note } : {}), log: draft.logWrites(state) }
}

/** The output of a call that stopped for counters: `before` unchanged, and what to read. */
export const counterStop = (before: ExecutionState, now: number, need: CounterNeed): EngineOutput => ({
  ...output(before, new Draft(before, now)),
  needsCounters: need
})

/**
 * Runs one core call; a call that reached a transition naming counters it has no values for
 * changes nothing and says what to read (`needsCounters`). The caller reads them and calls again
 * with the values appended to `counters` (see TransitionCounters.ts).
 */
const askingForCounters = (before: ExecutionState, now: number, run: () => EngineOutput): EngineOutput => {
  try {
    return run()
  } catch (error) {
    if (!(error instanceof CountersNeeded)) throw error
    return counterStop(before, now, error.need)
  }
}

/** Creates the execution of a job: enters the initial step and moves the job order to Running. */
export const start = (params: StartParams, now: number, counters: ReadonlyArray<CounterValues> = []): EngineOutput => {
  const keys = startKeys(params.recipe, params.jobId, params.order)
  const initial: ExecutionState = {
    jobId: params.jobId,
    scope: params.scope,
    workMasterId: params.workMasterId,
    recipe: params.recipe,
    ...("problem" in keys ? {} : keys),
    ...(params.recipeDigest !== undefined ? { recipeDigest: params.recipeDigest } : {}),
    status: "running",
    revision: 0,
    startedAt: now,
    maxAttempts: params.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    visits: {},
    active: [],
    branches: [],
    actions: [],
    results: {},
    history: [],
    ...jobLimit(params.recipe, now),
    ...orderKept(indexRecipe(params.recipe), params.order),
    ...counterRecheck(indexRecipe(params.recipe).v11, params.counterRecheckMs),
    ...(params.parent !== undefined ? { parent: params.parent } : {})
  }
  return askingForCounters(initial, now, () => {
    const draft = new Draft(initial, now, params.executionId)
    draft.counters = new CounterReadings(counters)
    if (params.parent === undefined) draft.emit({ type: "joborder", jobId: params.jobId, trigger: "Run" })
    if ("problem" in keys) failJob(draft, keys.problem) // a key the job order does not give never matches (enterStep then does nothing)
    enterStep(draft, draft.index.initialStep)
    settle(draft)
    return output(undefined, draft)
  })
}

const applyEvent = (draft: Draft, input: Extract<EngineInput, { type: "event" }>): string | undefined => {
  const at =
    input.correlationId !== undefined
      ? draft.actions.findIndex((r) => r.correlationId === input.correlationId && (r.state === "dispatched" || r.state === "waiting"))
      : runForEvent(draft, input.eventType, input)
  if (at < 0) return `no action is waiting for this event (${input.correlationId ?? input.eventType ?? "no id"})`
  const run = draft.actions[at]!
  // A reply carries no type into the core: its node is named like the reply event, `{TypeId}.reply`.
  logInstant(draft, "event", input.eventType ?? `${draft.index.action(run.action)?.TypeId ?? run.action}.reply`, {
    action: run.action, ...(input.correlationId !== undefined ? { correlationId: input.correlationId } : {}), ...(input.error !== undefined ? { error: input.error } : {})
  }, { run })
  if (input.error !== undefined) {
    if (!retryAfterError(draft, at)) failAction(draft, at, "error", input.error, `action ${run.action} failed: ${input.error}`)
    return undefined
  }
  draft.updateAction(at, { state: "completed", result: input.data ?? null, deadline: undefined, remainingMs: undefined })
  draft.results[run.action] = input.data ?? null
  logActionWritten(draft, at, true)
  // v1.1.0: a waiting step's late pulse changes what its transitions read.
  draft.recheck = true
  if (draft.state.status === "running") settle(draft)
  return undefined
}

const applyTick = (draft: Draft): void => {
  if (draft.state.status !== "running") return
  fireJobLimit(draft)
  if (draft.state.status !== "running") return
  const expired = draft.actions.flatMap((run, at) => (run.deadline !== undefined && run.deadline <= draft.now ? [at] : []))
  endChildren(draft, expired.map((at) => draft.actions[at]!), "it did not end in time") // a late child goes, whether retried or failed
  // Failures first: a job that fails in this write must not resend anything in the same write
  // (the command would reach the station before the job order leaves Running).
  for (const at of expired) {
    const run = draft.actions[at]!
    // An action that failed while paused, waiting for this first tick after Resume (ActionFailure.ts).
    if (run.state === "failed") return leaveOnError(draft, at)
    if (!timeoutSpends(draft, run)) continue
    const why = timeoutWhy(draft, run)
    logInstant(draft, "timeout", run.action, { error: why }, { run })
    return failAction(draft, at, "timeout", why, `action ${run.action} timed out: ${why}`)
  }
  // v1.1.0: steps past their MaxDuration go first; an action of a step left here is not resent.
  const due = expired.map((at) => draft.actions[at]!)
  fireStepLimits(draft)
  if (draft.state.status !== "running") return
  for (const run of due) {
    const at = draft.actions.indexOf(run)
    // Gone with its step, or a Retry policy's back-off that ended / an attempt that timed out.
    if (at < 0 || retryAfterTimeout(draft, at)) continue
    const action = draft.index.action(run.action)!
    logInstant(draft, "timeout", run.action, { resend: run.attempts + 1 }, { run })
    draft.updateAction(at, { attempts: run.attempts + 1, deadline: draft.now + action.TimeoutSeconds * 1000 })
    logActionWritten(draft, at, false)
    draft.emit({
      type: "command", jobId: draft.state.jobId, action: run.action, correlationId: run.correlationId!, typeId: action.TypeId,
      parameters: (action.Parameters ?? {}) as Record<string, unknown>, subject: draft.state.scope, attempt: run.attempts + 1
    })
  }
  fireTimed(draft)
  markDueRecheck(draft)
  if (draft.recheck) settle(draft)
}

const applyOutage = (draft: Draft, from: number, to: number): void => {
  const length = to - from
  if (length <= 0) return
  draft.actions.forEach((run, at) => {
    if (run.deadline !== undefined && run.deadline > from && run.deadline <= to) draft.updateAction(at, { deadline: run.deadline + length })
  })
  shiftLimits(draft, from, to)
  shiftTimed(draft, from, to)
}

/**
 * Applies one input. A terminal state is absorbing: it comes back unchanged. `freshExecutionId`
 * is the execution id a state without a log gets on this touch (a state stored before the log).
 */
export const step = (
  state: ExecutionState,
  input: EngineInput,
  now: number,
  freshExecutionId?: string,
  counters: ReadonlyArray<CounterValues> = []
): EngineOutput => askingForCounters(state, now, () => stepOnce(state, input, now, freshExecutionId, new CounterReadings(counters)))

/**
 * `step` without the counter stop: throws `CountersNeeded`. `readings` is the call's cursor over
 * the counter values, shared by the inputs of one `stepAll` (StepAll.ts).
 */
export const stepOnce = (state: ExecutionState, input: EngineInput, now: number, freshExecutionId: string | undefined, readings: CounterReadings): EngineOutput => {
  const draft = new Draft(state, now, freshExecutionId)
  draft.counters = readings
  if (isTerminalStatus(state.status)) return output(state, draft, `execution is ${state.status}`)
  return output(state, draft, applyInput(draft, input))
}

/** One input on a draft of a state that is not terminal; why it was ignored, if it was. */
const applyInput = (draft: Draft, input: EngineInput): string | undefined => {
  switch (input.type) {
    case "event":
      return applyEvent(draft, input)
    case "tick":
      applyTick(draft)
      return undefined
    case "outage":
      applyOutage(draft, input.from, input.to)
      return undefined
    case "pause":
      pause(draft, input.origin)
      pauseClocks(draft)
      return undefined
    case "hold":
      return holdCommand(draft, input.command)
    case "resume":
      resumeClocks(draft)
      resume(draft, input.origin)
      return undefined
    case "stop":
      stop(draft, input.origin)
      return undefined
    case "abort":
      abort(draft, input.reason, input.origin)
      return undefined
    case "order":
      return applyOrder(draft, input.order)
    default: // retry, skip-step, force-transition, set-result
      return intervene(draft, input)
  }
}
