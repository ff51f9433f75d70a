import { Effect, Exit } from "effect"
import { firstWorkMasterId } from "@microdcs/job-state"
import { WorkMasterDao } from "@microdcs/store"
import type { StartParams } from "@microdcs/sfc"
import type { Applied, ExecutionError } from "./ApplyOutcome.js"
import { Executions } from "./Executions.js"
import { followAfterStart, startFollows } from "./FollowOrder.js"
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
    return { jobId, scope: sorted.order.scope, workMasterId: sorted.workMasterId, recipe, recipeDigest: digest, maxAttempts: options.maxAttempts, counterRecheckMs: options.counterRecheckMs, order: sorted.order.jobOrder } satisfies StartParams
  })

/** The work masters the batch's jobs name, each read once (one pipelined read). */
const workMasterDocs = (sorted: ReadonlyArray<Sorted>) =>
  Effect.gen(function* () {
    const ids = [...new Set(sorted.flatMap((s) => (s._tag === "Recipe" ? [s.workMasterId] : [])))]
    if (ids.length === 0) return new Map<string, string>()
    return new Map((yield* (yield* WorkMasterDao).getMany(ids)).map((doc) => [doc.id, doc.doc] as const))
  })

type Outcomes = Array<Exit.Exit<StartOutcome, ExecutionError>>

/**
 * The jobs whose start may have missed an Update of their job order (`startFollows`) get it fed
 * now, side by side; a feed that fails fails that job's start alone. None on the hot path.
 */
const followed = (jobIds: ReadonlyArray<string>, orders: ReadonlyMap<string, LoadedJobOrder>, applied: ReadonlyArray<Applied | undefined>, outcomes: Outcomes) => {
  const ats = jobIds.flatMap((jobId, at) => (Exit.isSuccess(outcomes[at]!) && startFollows(orders.get(jobId), applied[at]) ? [at] : []))
  if (ats.length === 0) return Effect.succeed(outcomes)
  return Effect.map(
    Effect.forEach(ats, (at) => Effect.exit(Effect.andThen(followAfterStart(jobIds[at]!), outcomes[at]!)), { concurrency: "unbounded" }),
    (exits) => {
      exits.forEach((exit, k) => void (outcomes[ats[k]!] = exit))
      return outcomes
    }
  )
}

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
    const outcomes: Outcomes = []
    const applied: Array<Applied | undefined> = []
    const creates: Array<{ readonly at: number; readonly params: StartParams }> = []
    for (const [at, s] of sorted.entries()) {
      if (s._tag === "Done") outcomes[at] = Exit.succeed(s.outcome)
      else {
        const params = yield* paramsOf(jobIds[at]!, s, docs.get(s.workMasterId), options)
        if (typeof params === "string") outcomes[at] = Exit.succeed(params)
        else creates.push({ at, params })
      }
    }
    if (options.afterStartReadForTest) yield* options.afterStartReadForTest(jobIds)
    const created = yield* (yield* Executions).applyAll(creates.map(({ params }) => ({ jobId: params.jobId, input: { type: "tick" }, create: params })))
    created.forEach((exit, k) => {
      const { at } = creates[k]!
      if (Exit.isSuccess(exit)) applied[at] = exit.value
      outcomes[at] = Exit.map(exit, (done): StartOutcome => (done._tag === "Written" ? "started" : "already-started"))
    })
    return yield* followed(jobIds, orders, applied, outcomes)
  })
