import { backoffMs } from "./Backoff.js"
import { correlationIdOf } from "./Correlation.js"
import type { Draft } from "./Draft.js"
import type { ActionRun } from "./ExecutionState.js"
import { failJob } from "./Flow.js"
import { leaveTo } from "./LeaveTo.js"
import { logActionWritten, logInstant } from "./LogNodes.js"
import { dispatchEntry, isSubRecipe } from "./SubRecipes.js"
import type { RetryPolicy } from "../recipe/Recipe.js"

/**
 * What happens when an action fails: no reply or event before its deadline, or a reply (or event)
 * that carries an error. Without a failure policy (every v1.0.0 recipe) nothing changes: a silent
 * command is resent with its correlation id until `maxAttempts` sends, and a failure fails the job.
 *
 * - `Retry`: a failed attempt is followed by the next one, up to `MaxAttempts`. A command waits
 *   its back-off (state `pending`, the deadline its next send, so the due index schedules it) and
 *   goes out with a correlation id of its own: a station that remembers its answer per id would
 *   repeat the error to the same id, and a late reply to an earlier attempt finds nothing open and
 *   is ignored. An event's wait is re-armed at once (nothing is sent, and the job keeps its place).
 * - `OnError`: once no attempt is left, the step is left for that target instead of failing the
 *   job, and the action's result is an `ActionErrorResult` for the target's conditions.
 */

/**
 * The result of an action that failed for good and went to its OnError target. Flat, because
 * conditions read one field of an action's result and only scalars are truthy or compare:
 * `tighten.error` (the message, never empty) holds, `tighten.errorKind == "timeout"` tells why.
 */
export interface ActionErrorResult {
  readonly error: string
  /** `timeout`: no reply or event in time; `error`: the station answered with an error. */
  readonly errorKind: "timeout" | "error"
  /** How often it was tried: its policy's attempts, else a command's sends (an event: 1). */
  readonly attempts: number
}

const actionOf = (draft: Draft, run: ActionRun) => draft.index.action(run.action)
const attemptOf = (run: ActionRun): number => run.retryAttempt ?? 1

/** A deadline `ms` from now; while paused, the time left instead (Resume turns it into a deadline). */
const after = (draft: Draft, ms: number) =>
  draft.state.status === "paused" ? { deadline: undefined, remainingMs: ms } : { deadline: draft.now + ms, remainingMs: undefined }

/** Whether a passed deadline ends the action for good: no send or attempt is left to make. */
export const timeoutSpends = (draft: Draft, run: ActionRun): boolean => {
  const retry = actionOf(draft, run)?.Retry
  if (retry === undefined) return isSubRecipe(draft, run) || !(run.state === "dispatched" && run.attempts - (run.attemptBase ?? 0) < draft.state.maxAttempts)
  return run.state !== "pending" && attemptOf(run) >= retry.MaxAttempts
}

/** Why a spent deadline fails the action (the words of v1.0.0 for an action without a policy). */
export const timeoutWhy = (draft: Draft, run: ActionRun): string => {
  const action = actionOf(draft, run)!
  if (action.Interaction === "recipe") return `sub-recipe ${action.WorkMasterID} did not end within ${action.TimeoutSeconds} s`
  if (action.Retry === undefined) return run.state === "dispatched" ? `no reply after ${run.attempts} sends` : `no event within ${action.TimeoutSeconds} s`
  const what = run.state === "dispatched" ? "reply" : "event"
  return `no ${what} within ${action.TimeoutSeconds} s (attempt ${attemptOf(run)} of ${action.Retry.MaxAttempts})`
}

/** The next attempt: a command after its back-off, an event's wait re-armed now. */
const tryAgain = (draft: Draft, at: number, retry: RetryPolicy): void => {
  const run = draft.actions[at]!
  if (run.state === "waiting") {
    draft.updateAction(at, { retryAttempt: attemptOf(run) + 1, ...after(draft, actionOf(draft, run)!.TimeoutSeconds * 1000) })
  } else {
    draft.updateAction(at, { state: "pending", ...after(draft, backoffMs(retry, attemptOf(run))) })
  }
  logActionWritten(draft, at, false)
}

/** An error reply or event: the next attempt when the policy has one left (true), else false. */
export const retryAfterError = (draft: Draft, at: number): boolean => {
  const retry = actionOf(draft, draft.actions[at]!)?.Retry
  if (retry === undefined || attemptOf(draft.actions[at]!) >= retry.MaxAttempts) return false
  tryAgain(draft, at, retry)
  return true
}

/**
 * Sends a command's next attempt, its back-off over (or cut short by an operator's retry): a
 * new correlation id, its sends counted afresh.
 */
export const sendAttempt = (draft: Draft, at: number): void => {
  const run = draft.actions[at]!
  const action = actionOf(draft, run)!
  const attempt = attemptOf(run) + 1
  const correlationId = correlationIdOf(draft.state.jobId, run.action, run.visit, attempt)
  const deadline = draft.now + action.TimeoutSeconds * 1000
  draft.updateAction(at, { state: "dispatched", correlationId, attempts: 1, attemptBase: undefined, retryAttempt: attempt, deadline })
  logInstant(draft, "retry", run.action, { attempt, correlationId }, { run })
  logActionWritten(draft, at, false)
  draft.emit(dispatchEntry(draft, action, draft.actions[at]!, 1, attempt))
}

/**
 * A passed deadline of an action with a Retry policy that is not spent: a back-off ended (the
 * next attempt goes out), or an attempt timed out (the next one is scheduled). False without a policy.
 */
export const retryAfterTimeout = (draft: Draft, at: number): boolean => {
  const run = draft.actions[at]!
  const retry = actionOf(draft, run)?.Retry
  if (retry === undefined) return false
  if (run.state === "pending") {
    sendAttempt(draft, at)
    return true
  }
  logInstant(draft, "timeout", run.action, { retry: attemptOf(run) + 1 }, { run })
  tryAgain(draft, at, retry)
  return true
}

/** Leaves the failed action's step for its OnError target (its failure waited for a Resume). */
export const leaveOnError = (draft: Draft, at: number): void => {
  const run = draft.actions[at]!
  const active = draft.active.find((a) => a.step === run.step && a.visit === run.visit)
  const target = actionOf(draft, run)?.OnError
  if (active === undefined || target === undefined) return failJob(draft, `action ${run.action} failed: ${run.error ?? "unknown error"}`)
  leaveTo(draft, active, target, { onError: run.action })
}

/**
 * The action failed for good: without OnError, the job fails with `jobError` (as in v1.0.0);
 * with it, the action's result becomes an `ActionErrorResult` and its step is left for the target. While
 * paused the step cannot be left: the failure is due at once and the first tick after Resume
 * leaves it.
 */
export const failAction = (draft: Draft, at: number, kind: ActionErrorResult["errorKind"], message: string, jobError: string): void => {
  const run = draft.actions[at]!
  if (actionOf(draft, run)?.OnError === undefined) {
    draft.updateAction(at, { state: "failed", error: message, deadline: undefined })
    logActionWritten(draft, at, true)
    return failJob(draft, jobError)
  }
  const retried = actionOf(draft, run)?.Retry !== undefined
  const result: ActionErrorResult = {
    error: message === "" ? "the station reported an error" : message,
    errorKind: kind,
    attempts: retried ? attemptOf(run) : run.correlationId !== undefined ? run.attempts : 1
  }
  draft.updateAction(at, { state: "failed", error: message, result, ...after(draft, 0) })
  draft.results[run.action] = result
  logActionWritten(draft, at, true)
  if (draft.state.status === "running") leaveOnError(draft, at)
}
