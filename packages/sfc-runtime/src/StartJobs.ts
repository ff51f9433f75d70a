import { Effect, Exit } from "effect"
import { firstWorkMasterId } from "@microdcs/job-state"
import { WorkMasterDao } from "@microdcs/store"
import type { StartParams } from "@microdcs/sfc"
import type { ExecutionError } from "./ApplyOutcome.js"
import { Executions } from "./Executions.js"
import { JobOrderTransitions, type LoadedJobOrder } from "./JobOrderTransitions.js"
import { RecipeSnapshots } from "./RecipeSnapshots.js"
import type { StartOptions, StartOutcome } from "./StartJob.js"

/** A job of the batch: its outcome already, or the work master its recipe comes from. */
type Sorted = { readonly _tag: "Done"; readonly outcome: StartOutcome } | { readonly _tag: "Recipe"; readonly order: LoadedJobOrder; readonly workMasterId: string }

const sortOrder = (order: LoadedJobOrder | undefined): Sorted => {
  if (order === undefined) return { _tag: "Done", outcome: "missing" }
  if (order.state.main !== "AllowedToStart") return { _tag: "Done", outcome: "not-startable" }
  const workMasterId = firstWorkMasterId(order.jobOrder)
  return workMasterId === undefined ? { _tag: "Done", outcome: "no-recipe" } : { _tag: "Recipe", order, workMasterId }
}

/** The start of one job from its work master's document, or why it does not start. */
const paramsOf = (jobId: string, sorted: Extract<Sorted, { _tag: "Recipe" }>, doc: string | undefined, options: StartOptions) =>
  Effect.gen(function* () {
    const snapshots = yield* RecipeSnapshots
    const checked = doc === undefined ? undefined : snapshots.workMasterRecipe(doc)
    if (checked?._tag !== "Recipe") {
      if (checked?._tag === "Invalid") {
        yield* Effect.logWarning("work master recipe is invalid; the job is left to the MES").pipe(Effect.annotateLogs({ jobId, workMasterId: sorted.workMasterId }))
      }
      return "no-recipe" satisfies StartOutcome
    }
    const { digest, recipe } = yield* snapshots.snapshot(checked.recipe)
    // The job order goes along: the state keeps the fields the recipe's conditions read (`order.*`).
    return { jobId, scope: sorted.order.scope, workMasterId: sorted.workMasterId, recipe, recipeDigest: digest, ...options, order: sorted.order.jobOrder } satisfies StartParams
  })

/** The work masters the batch's jobs name, each read once (one pipelined read). */
const workMasterDocs = (sorted: ReadonlyArray<Sorted>) =>
  Effect.gen(function* () {
    const ids = [...new Set(sorted.flatMap((s) => (s._tag === "Recipe" ? [s.workMasterId] : [])))]
    if (ids.length === 0) return new Map<string, string>()
    return new Map((yield* (yield* WorkMasterDao).getMany(ids)).map((doc) => [doc.id, doc.doc] as const))
  })

/**
 * Starts the jobs of a batch together, as {@link startJob} starts one: their job orders in one
 * read, their work masters in one read, their creates handed to the engine's loop in one call
 * (so they share its ticks). One outcome per job, in order; a read that fails fails the batch,
 * which the caller then starts job by job.
 */
export const startJobs = (jobIds: ReadonlyArray<string>, options: StartOptions) =>
  Effect.gen(function* () {
    const orders = yield* (yield* JobOrderTransitions).loadMany(jobIds)
    const sorted = jobIds.map((jobId) => sortOrder(orders.get(jobId)))
    const docs = yield* workMasterDocs(sorted)
    const outcomes: Array<Exit.Exit<StartOutcome, ExecutionError>> = []
    const creates: Array<{ readonly at: number; readonly params: StartParams }> = []
    for (const [at, s] of sorted.entries()) {
      if (s._tag === "Done") outcomes[at] = Exit.succeed(s.outcome)
      else {
        const params = yield* paramsOf(jobIds[at]!, s, docs.get(s.workMasterId), options)
        if (typeof params === "string") outcomes[at] = Exit.succeed(params)
        else creates.push({ at, params })
      }
    }
    const created = yield* (yield* Executions).applyAll(creates.map(({ params }) => ({ jobId: params.jobId, input: { type: "tick" }, create: params })))
    created.forEach((exit, k) => {
      outcomes[creates[k]!.at] = Exit.map(exit, (applied): StartOutcome => (applied._tag === "Written" ? "started" : "already-started"))
    })
    return outcomes
  })
