import { Result } from "effect"
import { type Origin, originText } from "@microdcs/job-state"
import type { Draft } from "./Draft.js"
import { abortJob, settle, stopJob } from "./Flow.js"
import { releaseHeldCommands } from "./HeldCommands.js"
import { leaveByIntervention, retryAudited, setResult } from "./InterventionApply.js"
import type { ForceTransitionInput, InterventionInput, RetryInput, SetResultInput, SkipStepInput } from "./InterventionInput.js"
import { planIntervention } from "./InterventionPlan.js"
import { signalChildren } from "./SubRecipes.js"

export type { InterventionInput } from "./InterventionInput.js"
import { logInstant } from "./LogNodes.js"

/**
 * The inputs that come from outside the recipe: an MES method the engine follows (Pause, Resume,
 * Stop, Abort) or an operator's action (the CLI's abort; the audited interventions below). Each
 * writes a log node that names who sent it (`by`: `mes:urn:mes:line-1`, `cli:alice@host`) and the
 * comment it carried; an input without an origin (from before origins were recorded) is logged as it was.
 */

/** The detail naming who sent an input, from where and why, or nothing without an origin. */
const byOf = (origin: Origin | undefined): Record<string, string> | undefined =>
  origin === undefined
    ? undefined
    : { by: originText(origin), ...(origin.from !== undefined ? { from: origin.from } : {}), ...(origin.comment !== undefined ? { comment: origin.comment } : {}) }

export const pause = (draft: Draft, origin: Origin | undefined): void => {
  if (draft.state.status !== "running") return
  draft.state.status = "paused"
  draft.state.pausedAt = draft.now
  draft.actions.forEach((run, at) => {
    if (run.deadline !== undefined) draft.updateAction(at, { deadline: undefined, remainingMs: Math.max(0, run.deadline - draft.now) })
  })
  draft.touch()
  logInstant(draft, "pause", "pause", byOf(origin))
  signalChildren(draft, "pause")
}

export const resume = (draft: Draft, origin: Origin | undefined): void => {
  if (draft.state.status !== "paused") return
  draft.state.status = "running"
  delete draft.state.pausedAt
  draft.actions.forEach((run, at) => {
    if (run.remainingMs !== undefined) draft.updateAction(at, { remainingMs: undefined, deadline: draft.now + run.remainingMs })
  })
  draft.touch()
  logInstant(draft, "resume", "resume", byOf(origin))
  releaseHeldCommands(draft)
  signalChildren(draft, "resume")
  // Events that arrived while paused completed actions; advancing waited for now.
  settle(draft)
}

/** Stop: the job ends as completed; its `stop` node names who stopped it. */
export const stop = (draft: Draft, origin: Origin | undefined): void => {
  logInstant(draft, "stop", "stop", byOf(origin))
  stopJob(draft)
}

/** Abort: the job's error (and its error node) says who aborted it: "aborted by cli:alice@host". */
export const abort = (draft: Draft, reason: string | undefined, origin: Origin | undefined): void =>
  abortJob(draft, reason ?? (origin === undefined ? "aborted by the MES" : `aborted by ${originText(origin)}`), byOf(origin))

/**
 * An operator's intervention (skip a step, force a transition, set a result, retry an action):
 * applied when `planIntervention` accepts it, otherwise nothing changes and the note is the
 * refusal's message (`interventionRefusal` gives it as a typed error).
 */
export const intervene = (draft: Draft, input: InterventionInput): string | undefined => {
  const planned = planIntervention({ status: draft.state.status, active: draft.active, actions: draft.actions, index: draft.index }, input)
  if (Result.isFailure(planned)) return planned.failure.message
  const plan = planned.success
  switch (plan._tag) {
    case "Leave":
      leaveByIntervention(draft, input as SkipStepInput | ForceTransitionInput, plan.active, plan.transition)
      return undefined
    case "SetResult":
      setResult(draft, input as SetResultInput, plan.at)
      return undefined
    case "Retry":
      return retryAudited(draft, input as RetryInput)
  }
}
