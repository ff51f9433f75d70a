import type { Draft } from "./Draft.js"
import { failJob, settle } from "./Flow.js"
import { jumpOut } from "./Jump.js"
import { logInstant } from "./LogNodes.js"

/** What a tick does when a time limit (TimeLimits.ts) ran out. */

/** A tick: the job fails when its time limit ran out. */
export const fireJobLimit = (draft: Draft): void => {
  const at = draft.state.jobLimitAt
  if (at === undefined || at > draft.now) return
  const error = `the job ran longer than its MaxJobDuration (${draft.index.recipe.MaxJobDuration})`
  logInstant(draft, "timeout", "MaxJobDuration", { maxJobDuration: draft.index.recipe.MaxJobDuration, error })
  failJob(draft, error)
}

/**
 * A tick: every step whose time limit ran out goes to its `OnMaxDuration` (a step on a branch
 * path takes its branch with it), or fails the job. A step entered here has its whole limit
 * ahead, so this ends.
 */
export const fireStepLimits = (draft: Draft): void => {
  let jumped = false
  for (let active = expired(draft); active !== undefined && draft.state.status === "running"; active = expired(draft)) {
    const step = draft.index.step(active.step)
    const target = step?.OnMaxDuration
    const limit = step?.MaxDuration
    if (target === undefined) {
      const error = `step ${active.step} ran longer than its MaxDuration (${limit})`
      logInstant(draft, "timeout", active.step, { maxDuration: limit, error }, { visit: active.visit })
      return failJob(draft, error)
    }
    logInstant(draft, "timeout", active.step, { maxDuration: limit, to: target }, { visit: active.visit })
    jumpOut(draft, active, target)
    jumped = true
  }
  if (jumped) settle(draft)
}

const expired = (draft: Draft) => draft.active.find((a) => a.limitAt !== undefined && a.limitAt <= draft.now)
