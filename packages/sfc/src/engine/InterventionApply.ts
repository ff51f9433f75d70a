import { originText } from "@microdcs/job-state"
import type { Draft } from "./Draft.js"
import { type ActionRun, type ActiveStep, INTERVENTION_LIMIT, type InterventionRecord } from "./ExecutionState.js"
import { enterTarget, leaveStep, resultsOf, settle } from "./Flow.js"
import type { ForceTransitionInput, InterventionInput, RetryInput, SetResultInput, SkipStepInput } from "./InterventionInput.js"
import type { PlannedTransition } from "./InterventionPlan.js"
import { logActionAbandoned, logActionWritten, logInstant, logStepInstant } from "./LogNodes.js"
import { retryAction } from "./RetryAction.js"

/**
 * Applies an intervention that `planIntervention` accepted. Each writes its node in the execution
 * log (`by`, `reason` first in its detail, so a shortened view still shows them) and a record in
 * the state's `interventions`, before it changes anything else.
 */

/** The detail of an intervention's node: who, why, then what it did. */
const auditDetail = (input: InterventionInput, what: Record<string, unknown> = {}): Record<string, unknown> => ({
  by: originText(input.origin),
  ...(input.origin.from !== undefined ? { from: input.origin.from } : {}),
  reason: input.reason,
  ...what
})

const record = (draft: Draft, input: InterventionInput, name: string): void => {
  const entry: InterventionRecord = { at: draft.now, intervention: input.type, name, by: input.origin, reason: input.reason }
  const kept = [...(draft.state.interventions ?? []), entry]
  draft.state.interventions = kept.length > INTERVENTION_LIMIT ? kept.slice(kept.length - INTERVENTION_LIMIT) : kept
  draft.touch()
}

const isOpen = (state: string): boolean => state === "pending" || state === "dispatched" || state === "waiting"

/**
 * Drops the step's open N actions, each node closed with `abandoned: why`; returns their names. A
 * command already sent is not stopped: its late reply finds no action and is ignored. Pulses never
 * held the step and are left with it as usual.
 */
const abandonOpenRuns = (draft: Draft, active: ActiveStep, why: string): ReadonlyArray<string> => {
  const abandons = (run: ActionRun): boolean =>
    run.step === active.step && run.visit === active.visit && isOpen(run.state) && draft.index.action(run.action)?.Qualifier === "N"
  const abandoned: Array<string> = []
  draft.actions.forEach((run, at) => {
    if (!abandons(run)) return
    logActionAbandoned(draft, at, why)
    abandoned.push(run.action)
  })
  draft.actions = draft.actions.filter((run) => !abandons(run))
  return abandoned
}

/**
 * Skip or force: the step is left by `transition` without its condition being evaluated, or,
 * without one, as a step whose actions completed leaves (a path step goes on along its path, a
 * final step ends). Then everything that can move moves, as after a reply.
 */
export const leaveByIntervention = (draft: Draft, input: SkipStepInput | ForceTransitionInput, active: ActiveStep, transition: PlannedTransition | undefined): void => {
  const name = input.type === "skip-step" ? active.step : `${transition!.Source} -> ${transition!.Target}`
  const verb = input.type === "skip-step" ? `step ${active.step} skipped` : `transition ${name} forced`
  const what: Record<string, unknown> =
    input.type === "skip-step" ? { ...(transition ? { target: transition.Target } : {}) } : { transition: transition!.order, condition: transition!.Condition }
  const abandoned = abandonOpenRuns(draft, active, `${verb} by ${originText(input.origin)}`)
  logStepInstant(draft, active, input.type, name, auditDetail(input, abandoned.length > 0 ? { ...what, abandoned } : what))
  record(draft, input, name)
  if (transition !== undefined) {
    const runs = leaveStep(draft, active)
    enterTarget(draft, transition.Target, resultsOf(draft, runs))
  }
  settle(draft)
}

/** The action completes with `result` (an open one as if the station replied; a done one's result replaced). */
export const setResult = (draft: Draft, input: SetResultInput, at: number): void => {
  const run = draft.actions[at]!
  const replaced = run.state === "completed" ? { replaced: run.result ?? null } : {}
  logInstant(draft, "set-result", run.action, auditDetail(input, { result: input.result, ...replaced }), { run })
  record(draft, input, run.action)
  if (run.state === "completed") draft.updateAction(at, { result: input.result })
  else {
    draft.updateAction(at, { state: "completed", result: input.result, deadline: undefined, remainingMs: undefined, error: undefined })
    logActionWritten(draft, at, true)
  }
  draft.results[run.action] = input.result
  settle(draft)
}

/** The operator's retry of an open action (RetryAction.ts), audited. */
export const retryAudited = (draft: Draft, input: RetryInput): string | undefined => {
  const note = retryAction(draft, input.action)
  if (note !== undefined) return note
  const run = draft.actions.find((r) => r.action === input.action && (r.state === "dispatched" || r.state === "waiting"))
  const attempt = run?.correlationId !== undefined ? { attempt: run.attempts } : {}
  logInstant(draft, "retry", input.action, auditDetail(input, attempt), run === undefined ? undefined : { run })
  record(draft, input, input.action)
  return undefined
}
