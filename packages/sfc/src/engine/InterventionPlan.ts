import { Result } from "effect"
import { originProblems } from "@microdcs/job-state"
import type { Recipe } from "../recipe/Recipe.js"
import type { ActionRun, ActiveStep, ExecutionState, ExecutionStatus } from "./ExecutionState.js"
import { type ForceTransitionInput, type InterventionInput, MAX_REASON_LENGTH, type SetResultInput, type SkipStepInput } from "./InterventionInput.js"
import { invalid, type InterventionProblem, type InterventionRefused, notNow, refusalOf, unknown } from "./InterventionRefusal.js"
import { indexRecipe, isOpenForRetry, type RecipeIndex } from "./RecipeIndex.js"

/**
 * What an intervention will do to a state, or every reason it may not: one function for the
 * engine (which applies the plan) and for callers that want the refusal as a typed error
 * (`interventionRefusal`), so the two can never disagree.
 */

export type PlannedTransition = Recipe["Transitions"][number] & { readonly order: number }

export type InterventionPlan =
  /** Leave `active` by `transition` (its condition not evaluated), or, without one, as a finished step leaves. */
  | { readonly _tag: "Leave"; readonly active: ActiveStep; readonly transition: PlannedTransition | undefined }
  | { readonly _tag: "SetResult"; readonly at: number }
  | { readonly _tag: "Retry" }

/** The parts of a state (or of the engine's draft of one) an intervention is judged by. */
export interface InterventionView {
  readonly status: ExecutionStatus
  readonly active: ReadonlyArray<ActiveStep>
  readonly actions: ReadonlyArray<ActionRun>
  readonly index: RecipeIndex
}

interface Planned {
  readonly problems: ReadonlyArray<InterventionProblem>
  readonly plan?: InterventionPlan
}

const auditProblems = (input: InterventionInput): Array<InterventionProblem> => {
  const problems = originProblems(input.origin).map((p) => invalid(`the origin: ${p}`))
  const reason = typeof input.reason === "string" ? input.reason.trim() : ""
  if (reason === "") problems.push(invalid("a reason is required: say why the operator intervenes"))
  else if (input.reason.length > MAX_REASON_LENGTH) problems.push(invalid(`the reason is ${input.reason.length} characters long, at most ${MAX_REASON_LENGTH}`))
  return problems
}

const jobProblems = (status: ExecutionStatus): Array<InterventionProblem> => {
  if (status === "running") return []
  if (status === "paused") return [notNow("the job is paused: resume it first")]
  return [notNow(`the job has ended (${status}): nothing is left to intervene in`)]
}

const activeText = (view: InterventionView): string =>
  view.active.length === 0 ? "no step is active" : `active: ${view.active.map((a) => a.step).join(", ")}`

/** The active visit of `step`, or the problem that it is not active (only judged while the job runs). */
const activeOf = (view: InterventionView, step: string, problems: Array<InterventionProblem>): ActiveStep | undefined => {
  const active = view.active.find((a) => a.step === step)
  if (active === undefined && view.status === "running") problems.push(notNow(`step ${step} is not active (${activeText(view)})`))
  return active
}

const onBranchPath = (index: RecipeIndex, step: string): string | undefined =>
  (index.recipe.Branches ?? []).find((b) => b.Branches.some((path) => path.includes(step)))?.Name

/** The transition a skip takes: the one to `target`, or the step's only one; undefined for a path step or a final step. */
const skipTransition = (index: RecipeIndex, input: SkipStepInput, problems: Array<InterventionProblem>): PlannedTransition | undefined => {
  const branch = onBranchPath(index, input.step)
  if (branch !== undefined) {
    if (input.target !== undefined) problems.push(invalid(`step ${input.step} is on a path of branch ${branch}: it goes on along its path, so no target can be given`))
    return undefined
  }
  const outgoing = index.outgoing(input.step)
  const targets = outgoing.map((t) => t.Target).join(", ")
  if (input.target === undefined) {
    if (outgoing.length > 1) problems.push(invalid(`step ${input.step} has ${outgoing.length} transitions (to ${targets}): name the target`))
    return outgoing.length === 1 ? outgoing[0] : undefined
  }
  const chosen = outgoing.find((t) => t.Target === input.target)
  if (chosen === undefined && (index.step(input.target) !== undefined || index.branch(input.target) !== undefined)) {
    problems.push(unknown(`step ${input.step} has no transition to ${input.target} (${outgoing.length === 0 ? "it has none" : `its transitions lead to ${targets}`})`))
  }
  return chosen
}

const planSkip = (view: InterventionView, input: SkipStepInput): Planned => {
  const { index } = view
  const problems: Array<InterventionProblem> = []
  if (input.target !== undefined && index.step(input.target) === undefined && index.branch(input.target) === undefined) {
    problems.push(unknown(`target ${input.target} is not a step or branch of the recipe`))
  }
  if (index.step(input.step) === undefined) {
    problems.push(index.branch(input.step) ? invalid(`${input.step} is a branch, not a step: skip the steps of its paths`) : unknown(`step ${input.step} is not in the recipe`))
    return { problems }
  }
  const transition = skipTransition(index, input, problems)
  const active = activeOf(view, input.step, problems)
  return { problems, ...(active !== undefined ? { plan: { _tag: "Leave", active, transition } } : {}) }
}

const transitionOf = (index: RecipeIndex, ref: ForceTransitionInput["transition"], problems: Array<InterventionProblem>): PlannedTransition | undefined => {
  const all = index.recipe.Transitions
  if ("index" in ref) {
    if (!Number.isSafeInteger(ref.index) || ref.index < 0) problems.push(invalid(`transition index ${ref.index} is not a whole number from 0`))
    else if (ref.index >= all.length) problems.push(unknown(`the recipe has no transition ${ref.index} (it has ${all.length}, numbered from 0)`))
    else return { ...all[ref.index]!, order: ref.index }
    return undefined
  }
  const found = index.outgoing(ref.source).find((t) => t.Target === ref.target)
  if (found === undefined) problems.push(unknown(`the recipe has no transition from ${ref.source} to ${ref.target}`))
  return found
}

const planForce = (view: InterventionView, input: ForceTransitionInput): Planned => {
  const problems: Array<InterventionProblem> = []
  const transition = transitionOf(view.index, input.transition, problems)
  if (transition === undefined) return { problems }
  if (view.index.branch(transition.Source) !== undefined) {
    problems.push(invalid(`transition ${transition.Source} -> ${transition.Target} leaves branch ${transition.Source}: it is taken when the branch's paths end; skip the steps of its paths instead`))
    return { problems }
  }
  const active = activeOf(view, transition.Source, problems)
  return { problems, ...(active !== undefined ? { plan: { _tag: "Leave", active, transition } } : {}) }
}

const planSetResult = (view: InterventionView, input: SetResultInput): Planned => {
  const problems: Array<InterventionProblem> = []
  if (input.result === undefined) problems.push(invalid("a result is required (null for none)"))
  const action = view.index.action(input.action)
  if (action === undefined) return { problems: [...problems, unknown(`action ${input.action} is not in the recipe`)] }
  const at = view.actions.findIndex((r) => r.action === input.action && r.state !== "failed")
  if (at < 0 && view.status === "running") problems.push(notNow(`action ${input.action} is not in an active step (step ${action.Step} is not active; ${activeText(view)})`))
  return { problems, ...(at >= 0 ? { plan: { _tag: "SetResult", at } } : {}) }
}

const planRetry = (view: InterventionView, action: string): Planned => {
  const qualifier = view.index.action(action)?.Qualifier
  if (qualifier === undefined) return { problems: [unknown(`action ${action} is not in the recipe`)] }
  // v1.1.0's qualifiers send once by design (a stop, a delayed or stored command): a resend would start a timeout they never have.
  if (qualifier !== "N" && qualifier !== "P") return { problems: [invalid(`action ${action} has qualifier ${qualifier}: its command is sent once, not retried`)] }
  // A command waiting out its Retry policy's back-off is open too: the retry sends its next attempt now.
  const open = view.actions.some((r) => r.action === action && isOpenForRetry(view.index, r))
  if (!open && view.status === "running") return { problems: [notNow(`action ${action} is not open (no command waiting for its reply or its next attempt, no event awaited)`)] }
  return { problems: [], plan: { _tag: "Retry" } }
}

const planOf = (view: InterventionView, input: InterventionInput): Planned => {
  switch (input.type) {
    case "skip-step":
      return planSkip(view, input)
    case "force-transition":
      return planForce(view, input)
    case "set-result":
      return planSetResult(view, input)
    case "retry":
      return planRetry(view, input.action)
  }
}

/** The plan of an intervention, or its refusal listing every problem (input, names, then the job's state). */
export const planIntervention = (view: InterventionView, input: InterventionInput): Result.Result<InterventionPlan, InterventionRefused> => {
  const planned = planOf(view, input)
  const problems = [...auditProblems(input), ...planned.problems, ...jobProblems(view.status)]
  return problems.length === 0 && planned.plan !== undefined ? Result.succeed(planned.plan) : Result.fail(refusalOf(input.type, problems))
}

/**
 * Why the engine refuses `input` on `state`, or undefined when it would apply it. A runtime that
 * got no change back from the engine reports this as the typed error (the engine's note says the same).
 */
export const interventionRefusal = (state: ExecutionState, input: InterventionInput): InterventionRefused | undefined => {
  const planned = planIntervention({ status: state.status, active: state.active, actions: state.actions, index: indexRecipe(state.recipe) }, input)
  return Result.isFailure(planned) ? planned.failure : undefined
}
