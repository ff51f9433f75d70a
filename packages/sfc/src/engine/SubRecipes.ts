import type { Draft } from "./Draft.js"
import type { ActionRun } from "./ExecutionState.js"
import type { CommandEntry, OutboxEntry, SubRecipeDoneEntry, SubRecipeEntry } from "./Outbox.js"
import { childExecutionIdOf, subRecipeJobId } from "./SubRecipeIds.js"
import type { Action } from "../recipe/Recipe.js"
import { executionOfRun } from "./LogNodes.js"

/**
 * Sub-recipes (v1.1.0, `Interaction: "recipe"`): an action that runs another work master's recipe
 * as a child execution, ISA-88's procedure → unit procedure → operation. The parent's run is
 * `dispatched` like a push command's, with a correlation id; instead of a command the outbox gets
 * a `subrecipe` entry, and the child's end comes back as an event with that correlation id, so
 * the action completes with the child's results, or fails with its error (Retry and OnError
 * apply). A child moves no job order and writes no job response: its end goes to its parent.
 */

/** What an open action sends: a command, or a sub-recipe's child start (`attempt`: of the Retry policy). */
export const dispatchEntry = (draft: Draft, action: Action, run: Pick<ActionRun, "action" | "visit" | "correlationId" | "logNode">, attempt: number, retryAttempt = 1): CommandEntry | SubRecipeEntry => {
  const jobId = draft.state.jobId
  const parameters = (action.Parameters ?? {}) as Record<string, unknown>
  if (action.Interaction !== "recipe") {
    return { type: "command", jobId, action: action.Name, correlationId: run.correlationId!, typeId: action.TypeId, parameters, subject: draft.state.scope, attempt }
  }
  const childExecutionId = childExecutionIdOf(draft, { ...run, retryAttempt })
  const childJobId = subRecipeJobId(jobId, action.Name, run.visit, retryAttempt)
  // Recorded in the same write as the entry, so a Clear that removes this job finds the child.
  const children = draft.state.children ?? []
  if (!children.includes(childJobId)) draft.state.children = [...children, childJobId]
  const into = run.logNode === undefined ? undefined : executionOfRun(draft, run as ActionRun)
  return {
    ...(childExecutionId !== undefined ? { childExecutionId } : {}),
    ...(into !== undefined ? { logParent: { executionId: into, seq: run.logNode!.seq } } : {}),
    type: "subrecipe", jobId, action: action.Name, childJobId, correlationId: run.correlationId!,
    rootJobId: draft.state.parent?.rootJobId ?? jobId, workMasterId: action.WorkMasterID!, ...(action.Digest !== undefined ? { digest: action.Digest } : {}), parameters
  }
}

/** Aborts (or, when the parent stops, stops) the child of each open sub-recipe run among `runs`. */
export const endChildren = (draft: Draft, runs: ReadonlyArray<ActionRun>, reason: string): void => {
  for (const run of runs) {
    const action = draft.index.action(run.action)
    if (action?.Interaction !== "recipe" || run.state !== "dispatched") continue
    const how = draft.state.status === "stopped" ? "stop" : "abort"
    draft.emit({ type: "subrecipe-end", jobId: draft.state.jobId, childJobId: subRecipeJobId(draft.state.jobId, run.action, run.visit, run.retryAttempt ?? 1), how, reason })
  }
}

/** Pauses or resumes the child of each open sub-recipe run with its parent. */
export const signalChildren = (draft: Draft, how: "pause" | "resume"): void => {
  for (const run of draft.actions) {
    if (draft.index.action(run.action)?.Interaction !== "recipe" || run.state !== "dispatched") continue
    const reason = `the parent job ${how === "pause" ? "paused" : "resumed"}`
    draft.emit({ type: "subrecipe-end", jobId: draft.state.jobId, childJobId: subRecipeJobId(draft.state.jobId, run.action, run.visit, run.retryAttempt ?? 1), how, reason })
  }
}

/** Whether a run is a sub-recipe's (its timeout is never a resend: one child per attempt). */
export const isSubRecipe = (draft: Draft, run: ActionRun): boolean => draft.index.action(run.action)?.Interaction === "recipe"

/**
 * The entries of an ended execution: a child's end for its parent, else the job order move and
 * the job response (`ofJob`).
 */
export const endEntries = (draft: Draft, status: "completed" | "failed" | "aborted" | "stopped", error: string | undefined, ofJob: () => ReadonlyArray<OutboxEntry>): ReadonlyArray<OutboxEntry> => {
  const parent = draft.state.parent
  if (parent === undefined) return ofJob()
  return [{
    type: "subrecipe-done", jobId: draft.state.jobId, parentJobId: parent.jobId, correlationId: parent.correlationId, workMasterId: draft.state.workMasterId, status,
    data: { ...draft.results }, ...(error !== undefined ? { error } : {})
  }]
}

/** The error the parent's action fails with when its child did not complete. */
export const childError = (workMasterId: string, status: string, error: string | undefined): string =>
  `sub-recipe ${workMasterId} ${status}${error !== undefined ? `: ${error}` : ""}`

/**
 * The parent's input for its child's end: an event answering the sub-recipe's correlation id,
 * with the child's results; a child that failed or was aborted fails the action with its error.
 * A stopped child ended without error (as a stopped job's response is Ended_Completed).
 */
export const childEndInput = (done: SubRecipeDoneEntry): { readonly type: "event"; readonly correlationId: string; readonly data: unknown; readonly error?: string } => {
  const ok = done.status === "completed" || done.status === "stopped"
  return { type: "event", correlationId: done.correlationId, data: done.data, ...(ok ? {} : { error: childError(done.workMasterId, done.status, done.error) }) }
}
