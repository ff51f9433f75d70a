import { Effect, Option, Context, Layer } from "effect"
import { type NotFound, SfcStateDao } from "@microdcs/store"
import { everyKeyedWait, indexesOf, type StartParams } from "@microdcs/sfc"
import { makeApplyLoop } from "./ApplyLoop.js"
import type { Applied, ExecutionError } from "./ApplyOutcome.js"
import { BoundedMap } from "./BoundedMap.js"
import { CommandDispatch } from "./CommandDispatch.js"
import { makeCounterReads } from "./CounterReads.js"
import { ExecutionLogWriter } from "./ExecutionLogWriter.js"
import { type ExecutionDeps, load, type LoadedExecution } from "./ExecutionStates.js"
import { JobOrderTransitions } from "./JobOrderTransitions.js"
import { RecipeSnapshots } from "./RecipeSnapshots.js"

export type { LoadedExecution } from "./ExecutionStates.js"
export type { Applied, ExecutionError } from "./ApplyOutcome.js"

/** Execution states one process keeps in memory (the jobs it moved last). */
const STATE_CACHE_SIZE = 10_000

/** The index entries of a job as Valkey holds them (what reconcile compares a state against). */
export interface IndexEntries {
  readonly due: number | null
  readonly active: boolean
}

/**
 * Rewrites a state unchanged so that its due, active and waits entries match it again
 * (reconcile after a lost write or a manual edit). Returns false when nothing needed it.
 */
const reindex = <E = never, R = never>(deps: ExecutionDeps, jobId: string, present: IndexEntries | Effect.Effect<IndexEntries, E, R>) =>
  Effect.gen(function* () {
    const loaded = yield* load(deps, jobId)
    if (Option.isNone(loaded)) return false
    const { state, version } = loaded.value
    // Read after the state: an index entry written after this read came with a newer
    // version, so the CAS below conflicts instead of rewriting a state that had moved.
    const found = Effect.isEffect(present) ? yield* present : present
    const wanted = indexesOf(state)
    if (wanted.due === found.due && wanted.active === found.active) return false
    yield* deps.states
      .compareAndSet({
        jobId, scope: state.scope, expectedVersion: version, doc: deps.snapshots.encodeState(state), entries: [],
        due: wanted.due, active: wanted.active, waitsAdd: wanted.waits, waitsRemove: [], keyedWaitsAdd: wanted.keyedWaits
      })
      .pipe(Effect.catchTags({ VersionConflict: () => Effect.void, DuplicateEvent: () => Effect.void, ScopeConflict: (e) => Effect.die(e) }))
    return true
  })

/**
 * Removes a job's execution and every index entry (the MES cleared or cancelled the job), then its
 * sub-recipe children, recursively. The job goes first: a child started after this read finds its
 * parent gone and removes itself (SubRecipeEntries.ts).
 */
const remove = (deps: ExecutionDeps, jobId: string): Effect.Effect<boolean, ExecutionError | NotFound> =>
  Effect.gen(function* () {
    const loaded = yield* load(deps, jobId)
    if (Option.isNone(loaded)) return false
    const { state } = loaded.value
    const waits = state.recipe.Actions.filter((a) => a.Interaction === "pull_event").map((a) => a.TypeId)
    deps.cache.delete(jobId)
    yield* deps.states.delete({ jobId, waits: [...new Set(waits)], keyedWaits: everyKeyedWait(state) }).pipe(
      Effect.catchTags({ NotFound: () => Effect.void, VersionConflict: () => Effect.void })
    )
    for (const child of state.children ?? []) yield* remove(deps, child)
    return true
  })

/**
 * Reads execution states, runs the pure core on them and writes the result with the one CAS
 * script. A lost CAS means another instance moved the job: read again and recompute.
 */
export class Executions extends Context.Service<Executions>()("@microdcs/sfc/Executions", {
  make: Effect.gen(function* () {
    const deps: ExecutionDeps = {
      states: yield* SfcStateDao,
      dispatch: yield* CommandDispatch,
      snapshots: yield* RecipeSnapshots,
      executionLog: yield* ExecutionLogWriter,
      counters: yield* makeCounterReads,
      jobOrders: Option.getOrUndefined(yield* Effect.serviceOption(JobOrderTransitions)),
      cache: new BoundedMap<string, LoadedExecution>(STATE_CACHE_SIZE)
    }
    const loop = yield* makeApplyLoop(deps)
    return {
      load: (jobId: string) => load(deps, jobId),
      /** Creates a job's execution (create-only: a second start of the same job is a `Duplicate`), through the loop. */
      create: (params: StartParams): Effect.Effect<Applied, ExecutionError> => loop.create(params),
      /**
       * Applies one input through the engine's loop (a tick takes it with the other inputs that
       * arrived meanwhile); `input` may depend on the state it applies to (e.g. outage bounds). An
       * `appliedEvent` is recorded in the same write, so a redelivered event is a no-op.
       */
      apply: loop.apply,
      /** Several inputs handed in at once (each answered on its own, in order): no fiber per input. */
      applyAll: loop.applyAll,
      /** The loop's inbox and ticks right now. */
      loopStats: loop.stats,
      reindex: <E = never, R = never>(jobId: string, present: IndexEntries | Effect.Effect<IndexEntries, E, R>) => reindex(deps, jobId, present),
      remove: (jobId: string) => remove(deps, jobId)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies.pipe(Layer.provide([CommandDispatch.Default, RecipeSnapshots.Default, ExecutionLogWriter.Default]))
}
