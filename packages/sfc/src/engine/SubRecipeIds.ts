import type { Draft } from "./Draft.js"
import type { ActionRun } from "./ExecutionState.js"

/** The ids of a sub-recipe's child (SubRecipes.ts): derived from the parent's, so they are known before the child exists. */

/** The child's job id: derived from the parent's, so a redelivered entry names the same child. */
export const subRecipeJobId = (jobId: string, action: string, visit: number, attempt = 1): string =>
  `${jobId}/${action}/${visit}${attempt === 1 ? "" : `.${attempt}`}`

/**
 * The child's execution id in the log: derived from the parent's (which is fresh per start), so the
 * parent's action node can name it before the child exists. Undefined without a log or for another action.
 */
export const childExecutionIdOf = (draft: Draft, run: Pick<ActionRun, "action" | "visit" | "retryAttempt">): string | undefined => {
  if (draft.log === undefined || draft.index.action(run.action)?.Interaction !== "recipe") return undefined
  const attempt = run.retryAttempt ?? 1
  return `${draft.log.executionId}/${run.action}/${run.visit}${attempt === 1 ? "" : `.${attempt}`}`
}

