import { sendAttempt } from "./ActionFailure.js"
import type { Draft } from "./Draft.js"
import { logActionWritten } from "./LogNodes.js"
import { isOpenForRetry } from "./RecipeIndex.js"
import { dispatchEntry } from "./SubRecipes.js"

/**
 * An operator's retry of an open action, for a station that was unreachable and is back: a push
 * command that is still waiting for its reply goes out again now, as the next attempt with the
 * send budget counted afresh from here; a pull event's wait starts its timeout over. An action
 * that already failed ended its job (ISA-95: Aborted is final), so it is not retried: the MES
 * submits the job again. A command waiting out its Retry policy's back-off sends its next attempt
 * now instead of at the back-off's end. Returns why nothing was done, or undefined.
 */
export const retryAction = (draft: Draft, name: string): string | undefined => {
  if (draft.state.status !== "running") return `execution is ${draft.state.status}: only a running job's actions are retried`
  const at = draft.actions.findIndex((r) => r.action === name && isOpenForRetry(draft.index, r))
  if (at < 0) return `action ${name} is not open (no command waiting for its reply or its next attempt, no event awaited)`
  const run = draft.actions[at]!
  const action = draft.index.action(run.action)
  if (action === undefined) return `action ${name} is not in the recipe`
  if (run.state === "pending") {
    sendAttempt(draft, at)
    return undefined
  }
  const deadline = draft.now + action.TimeoutSeconds * 1000
  if (run.state === "waiting") {
    draft.updateAction(at, { deadline })
    return undefined
  }
  const attempt = run.attempts + 1
  draft.updateAction(at, { attempts: attempt, attemptBase: run.attempts, deadline })
  logActionWritten(draft, at, false)
  // A sub-recipe's entry names the same child: starting it again is a no-op (create-only).
  draft.emit(dispatchEntry(draft, action, run, attempt, run.retryAttempt ?? 1))
  return undefined
}
