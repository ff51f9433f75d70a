import { Result } from "effect"
import type { Recipe } from "../recipe/Recipe.js"
import type { Draft } from "./Draft.js"
import type { ActionResult } from "./RecipeIndex.js"
import { conditionContext } from "./StepClocks.js"
import { chooseTransitionOf } from "./TransitionCounters.js"

/**
 * Which transition a step or branch leaves by, and which path of a selection branch it enters.
 * v1.0.0 picks the transition first and fails the job when the selection branch it leads to has
 * no path that holds. v1.1.0 reads a selection branch like IEC 61131-3's selection divergence: a
 * transition into it holds only together with one of its paths, so without a path the next
 * candidate is tried (and with none the source waits).
 */

type Branch = NonNullable<Recipe["Branches"]>[number]
type Candidate = Recipe["Transitions"][number] & { readonly order: number }

export interface Chosen {
  readonly transition: Candidate
  /** The path of the selection branch it enters, when that was chosen with it (v1.1.0). */
  readonly path?: number
}

/**
 * The path of a selection branch to enter: the lowest priority transition into a path that
 * holds; path 0 when no transition leads into its paths; `undefined` when none holds. A failed
 * counter read is the job's error message.
 */
export const choosePath = (draft: Draft, branch: Branch, results: ReadonlyArray<ActionResult>): Result.Result<number | undefined, string> => {
  const firstSteps = branch.Branches.map((path) => path[0]!)
  const into = draft.index.outgoing(branch.Name).filter((t) => firstSteps.includes(t.Target))
  if (into.length === 0) return Result.succeed(0)
  const choice = chooseTransitionOf(draft.index, draft.counters, branch.Name, into, results, conditionContext(draft))
  if (Result.isFailure(choice)) return Result.fail(`selection branch ${branch.Name}: ${choice.failure.message}`)
  return Result.succeed(choice.success ? firstSteps.indexOf(choice.success.Target) : undefined)
}

/** The transition out of `source` among `outgoing` (and its selection path in v1.1.0), `undefined` when none holds. */
export const chooseExit = (
  draft: Draft,
  source: string,
  outgoing: ReadonlyArray<Candidate>,
  results: ReadonlyArray<ActionResult>
): Result.Result<Chosen | undefined, string> => {
  let candidates = outgoing
  const context = conditionContext(draft)
  for (;;) {
    const choice = chooseTransitionOf(draft.index, draft.counters, source, candidates, results, context)
    if (Result.isFailure(choice)) return Result.fail(`transition out of ${source}: ${choice.failure.message}`)
    const transition = choice.success
    const branch = transition === undefined ? undefined : draft.index.branch(transition.Target)
    if (transition === undefined || !draft.index.v11 || branch?.Type !== "selection") return Result.succeed(transition && { transition })
    const path = choosePath(draft, branch, results)
    if (Result.isFailure(path)) return Result.fail(path.failure)
    if (path.success !== undefined) return Result.succeed({ transition, path: path.success })
    candidates = candidates.filter((t) => t !== transition)
  }
}
