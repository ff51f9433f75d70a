import { durationMs } from "../recipe/Duration.js"
import type { Recipe } from "../recipe/Recipe.js"
import { recipeSchemaVersion } from "../recipe/RecipeVersions.js"
import type { Draft } from "./Draft.js"
import { holdStepTimes } from "./StepClocks.js"
import { pauseTimed, resumeTimed } from "./TimedCommands.js"

/**
 * Time limits (v1.1.0): a step's `MaxDuration` (then `OnMaxDuration`, or the job fails) and the
 * recipe's `MaxJobDuration`. Each is a deadline like an action's: in the due index, frozen while
 * the job is paused (what is left is kept and restarts on Resume), and moved back by the
 * outage grace when it fell inside an outage of the engine.
 */

/** The time limit of a step entered now: `{ limitAt }`, or nothing (no MaxDuration, or a v1.0.0 recipe). */
export const stepLimit = (draft: Draft, step: string): { readonly limitAt?: number } => {
  const ms = draft.index.v11 ? durationMs(draft.index.step(step)?.MaxDuration) : undefined
  return ms === undefined ? {} : { limitAt: draft.now + ms }
}

/** The job's time limit at its start: `{ jobLimitAt }`, or nothing. */
export const jobLimit = (recipe: Recipe, now: number): { readonly jobLimitAt?: number } => {
  const ms = recipeSchemaVersion(recipe) === "1.1.0" ? durationMs(recipe.MaxJobDuration) : undefined
  return ms === undefined ? {} : { jobLimitAt: now + ms }
}

/** Pause: each running time limit (and qualifier delay or limit) keeps what is left of it. */
export const pauseClocks = (draft: Draft): void => {
  if (draft.state.status !== "paused") return
  pauseTimed(draft)
  draft.active = draft.active.map((a) => {
    if (a.limitAt === undefined) return a
    const { limitAt, ...rest } = a
    return { ...rest, limitLeftMs: Math.max(0, limitAt - draft.now) }
  })
  const job = draft.state.jobLimitAt
  if (job !== undefined) {
    delete draft.state.jobLimitAt
    draft.state.jobLimitLeftMs = Math.max(0, job - draft.now)
  }
}

/**
 * Resume: each frozen time limit runs again with what was left of it, the pause is left out of
 * the steps' times, and a waiting step's transitions are evaluated again (counters may have
 * moved meanwhile).
 */
export const resumeClocks = (draft: Draft): void => {
  if (draft.state.status !== "paused") return
  draft.recheck = true
  resumeTimed(draft)
  holdStepTimes(draft)
  draft.active = draft.active.map((a) => {
    if (a.limitLeftMs === undefined) return a
    const { limitLeftMs, ...rest } = a
    return { ...rest, limitAt: draft.now + limitLeftMs }
  })
  const left = draft.state.jobLimitLeftMs
  if (left !== undefined) {
    delete draft.state.jobLimitLeftMs
    draft.state.jobLimitAt = draft.now + left
  }
}

/** Outage grace: a time limit that ran out inside the outage `(from, to]` moves back by its length. */
export const shiftLimits = (draft: Draft, from: number, to: number): void => {
  const inside = (at: number | undefined): at is number => at !== undefined && at > from && at <= to
  draft.active.forEach((a, i) => {
    if (!inside(a.limitAt)) return
    draft.active[i] = { ...a, limitAt: a.limitAt + to - from }
    draft.touch()
  })
  const job = draft.state.jobLimitAt
  if (!inside(job)) return
  draft.state.jobLimitAt = job + to - from
  draft.touch()
}
