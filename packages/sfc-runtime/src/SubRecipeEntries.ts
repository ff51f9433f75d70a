import { Effect } from "effect"
import { StateMoved, WorkMasterDao } from "@microdcs/store"
import { childEndInput, type ExecutionState, type Recipe, type SubRecipeDoneEntry, type SubRecipeEndEntry, type SubRecipeEntry } from "@microdcs/sfc"
import type { StartOptions } from "./StartJob.js"
import { Executions } from "./Executions.js"
import { RecipeSnapshots } from "./RecipeSnapshots.js"

/**
 * The outbox entries of sub-recipes (recipe v1.1.0). A child is an execution of its own, keyed by
 * a job id derived from its parent's (`{parent}/{action}/{visit}`), in the parent's scope, and
 * without a job order: its commands are gated on its root job's order, it moves no job order and
 * writes no job response; its end is written as a `subrecipe-done` entry and given to the parent
 * as an event answering the action's correlation id, through the same apply path as a station reply.
 * Every handler is idempotent: a start is create-only, an end or abort of a terminal execution is a no-op.
 * A child follows its parent: paused and resumed with it, aborted when the parent no longer waits
 * for it, removed when the parent was removed (a Clear or Cancel that came before the child).
 */

/** The child's recipe: the work master's current one, or (pinned) the stored snapshot of `digest`; else why not. */
const childRecipe = (entry: SubRecipeEntry) =>
  Effect.gen(function* () {
    const snapshots = yield* RecipeSnapshots
    const stored = yield* (yield* WorkMasterDao).get(entry.workMasterId).pipe(
      Effect.map((doc) => doc.doc),
      Effect.catchTag("NotFound", () => Effect.succeed(undefined))
    )
    const checked = stored === undefined ? undefined : snapshots.workMasterRecipe(stored)
    if (checked?._tag === "Recipe") {
      const current = yield* snapshots.snapshot(checked.recipe)
      if (entry.digest === undefined || current.digest === entry.digest) return current
    }
    if (entry.digest !== undefined) {
      const pinned = yield* snapshots.recipeOf(entry.digest).pipe(Effect.catchTag("InvalidInput", () => Effect.succeed(undefined)))
      if (pinned !== undefined) return { digest: entry.digest, recipe: pinned as Recipe }
      return `recipe ${entry.digest} of work master ${entry.workMasterId} is not stored`
    }
    return checked === undefined ? `work master ${entry.workMasterId} has no recipe` : `work master ${entry.workMasterId} has no valid recipe`
  })

/** Whether the parent (not ended) still waits for the child that answers `correlationId`. */
const waitsFor = (parent: ExecutionState, correlationId: string): boolean =>
  (parent.status === "running" || parent.status === "paused") && parent.actions.some((a) => a.correlationId === correlationId && a.state === "dispatched")

/** Starts the child, create-only; a child that cannot start fails the parent's action at once. */
export const startSubRecipe = (entry: SubRecipeEntry, options: StartOptions) =>
  Effect.gen(function* () {
    const executions = yield* Executions
    const parent = yield* executions.load(entry.jobId)
    // The parent moved on (ended, left the step, or retried with another child): nothing to start.
    if (parent._tag === "None" || !waitsFor(parent.value.state, entry.correlationId)) return
    const found = yield* childRecipe(entry)
    if (typeof found === "string") {
      yield* executions.apply(entry.jobId, { type: "event", correlationId: entry.correlationId, error: `sub-recipe ${entry.workMasterId} did not start: ${found}` })
      return
    }
    const state = parent.value.state
    yield* executions.create({
      jobId: entry.childJobId, scope: state.scope, workMasterId: entry.workMasterId, recipe: found.recipe, recipeDigest: found.digest,
      maxAttempts: options.maxAttempts, counterRecheckMs: options.counterRecheckMs, executionId: entry.childExecutionId,
      // What the child's conditions read as `order.*`: the action's parameters.
      order: { ID: entry.childJobId, WorkMasterID: entry.workMasterId, Parameters: entry.parameters },
      parent: { jobId: entry.jobId, correlationId: entry.correlationId, action: entry.action, rootJobId: entry.rootJobId, ...(entry.logParent !== undefined ? { log: entry.logParent } : {}) }
    })
    // The parent may have moved since the check above (paused, aborted, removed): the child follows.
    yield* followParent(entry.childJobId)
  })

/** Rounds of `followParent` before giving up (the entry is then retried by the poller). */
const MAX_FOLLOW_ROUNDS = 10

/**
 * Brings a child in line with its parent as the parent is now: removed with a removed parent,
 * stopped or aborted when the parent no longer waits for it, else paused or running as the
 * parent is. Checks after its write that the parent did not move meanwhile (a Pause and a Resume
 * handled concurrently reach the child in either order), so the child's last write follows the
 * parent's last state.
 */
export const followParent = (childJobId: string) =>
  Effect.gen(function* () {
    const executions = yield* Executions
    for (let round = 0; round < MAX_FOLLOW_ROUNDS; round++) {
      const child = yield* executions.load(childJobId)
      const link = child._tag === "Some" ? child.value.state.parent : undefined
      if (link === undefined) return
      const parent = yield* executions.load(link.jobId)
      if (parent._tag === "None") return void (yield* executions.remove(childJobId))
      const { state, version } = parent.value
      if (!waitsFor(state, link.correlationId)) {
        const input = state.status === "stopped" ? ({ type: "stop" } as const) : ({ type: "abort", reason: "the parent job no longer waits for it" } as const)
        return void (yield* executions.apply(childJobId, input))
      }
      yield* executions.apply(childJobId, { type: state.status === "paused" ? "pause" : "resume" })
      const again = yield* executions.load(link.jobId)
      if (again._tag === "None" || again.value.version !== version) continue
      return
    }
    return yield* new StateMoved({ key: childJobId, attempts: MAX_FOLLOW_ROUNDS })
  })

/**
 * Aborts or stops a child (its parent ended or stopped waiting), or pauses or resumes it with its
 * parent (following the parent's state, not the entry's word); a child not (yet) there is left alone.
 */
export const endSubRecipe = (entry: SubRecipeEndEntry) =>
  Effect.gen(function* () {
    if (entry.how === "pause" || entry.how === "resume") return yield* followParent(entry.childJobId)
    const input = entry.how === "stop" ? ({ type: "stop" } as const) : ({ type: "abort", reason: entry.reason } as const)
    yield* (yield* Executions).apply(entry.childJobId, input)
  })

/** Hands a child's end to its parent: the action completes with the results, or fails with the error. */
export const subRecipeDone = (entry: SubRecipeDoneEntry) =>
  Effect.gen(function* () {
    yield* (yield* Executions).apply(entry.parentJobId, childEndInput(entry))
  })
