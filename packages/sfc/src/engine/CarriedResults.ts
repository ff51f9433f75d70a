import type { ActiveStep } from "./ExecutionState.js"
import type { ActionResult } from "./RecipeIndex.js"

/**
 * The results a step's transitions read: what it carried in (it was entered by an OnError, see
 * LeaveTo.ts), then its own. An action that has a result of its own here hides its carried one
 * entirely, so a field of an old error never shows through a newer result.
 */
export const withCarried = (active: ActiveStep, own: ReadonlyArray<ActionResult>): ReadonlyArray<ActionResult> => {
  if (active.carried === undefined) return own
  const fresh = new Set(own.map((r) => r.action))
  return [...active.carried.filter((r) => !fresh.has(r.action)), ...own]
}
