import { Effect } from "effect"
import { firstWorkMasterId } from "@microdcs/job-state"
import { WorkMasterDao } from "@microdcs/store"
import type { EngineOptions } from "./EngineOptions.js"
import { Executions } from "./Executions.js"
import { followAfterStart, startFollows } from "./FollowOrder.js"
import { JobOrderTransitions } from "./JobOrderTransitions.js"
import { RecipeSnapshots } from "./RecipeSnapshots.js"

export type StartOutcome = "started" | "already-started" | "not-startable" | "no-recipe" | "missing"

/** What a start takes from the engine's options into the execution. */
export type StartOptions = Pick<EngineOptions, "maxAttempts" | "counterRecheckMs" | "afterStartReadForTest">

/**
 * Starts a job when its order is `AllowedToStart` and its first work master carries a valid
 * recipe. The execution is created create-only, so a duplicate start (two
 * instances, a redelivered change) does nothing. A job order without a recipe is left to the MES.
 * The recipe is stored once by digest (RecipeSnapshots) before the state that names it. An
 * Update of the job order that landed after the read is fed to the execution (see `startFollows`).
 */
export const startJob = (jobId: string, options: StartOptions) =>
  Effect.gen(function* () {
    const jobOrders = yield* JobOrderTransitions
    const workMasters = yield* WorkMasterDao
    const executions = yield* Executions
    const snapshots = yield* RecipeSnapshots
    const order = yield* jobOrders.load(jobId)
    if (!order) return "missing" satisfies StartOutcome
    if (order.state.main !== "AllowedToStart") {
      if (startFollows(order, undefined)) yield* followAfterStart(jobId)
      return "not-startable" satisfies StartOutcome
    }
    const workMasterId = firstWorkMasterId(order.jobOrder)
    if (workMasterId === undefined) return "no-recipe" satisfies StartOutcome
    const workMaster = yield* workMasters.get(workMasterId).pipe(
      Effect.map((doc) => doc.doc),
      Effect.catchTag("NotFound", () => Effect.succeed(undefined))
    )
    if (workMaster === undefined) return "no-recipe" satisfies StartOutcome
    const checked = snapshots.workMasterRecipe(workMaster)
    if (checked._tag !== "Recipe") {
      if (checked._tag === "Invalid") yield* Effect.logWarning("work master recipe is invalid; the job is left to the MES").pipe(Effect.annotateLogs({ jobId, workMasterId }))
      return "no-recipe" satisfies StartOutcome
    }
    const { digest, recipe } = yield* snapshots.snapshot(checked.recipe)
    if (options.afterStartReadForTest) yield* options.afterStartReadForTest([jobId])
    const created = yield* executions.create({ jobId, scope: order.scope, workMasterId, recipe, recipeDigest: digest, maxAttempts: options.maxAttempts, counterRecheckMs: options.counterRecheckMs, order: order.jobOrder })
    if (startFollows(order, created)) yield* followAfterStart(jobId)
    return (created._tag === "Written" ? "started" : "already-started") satisfies StartOutcome
  })
