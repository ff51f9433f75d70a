import { Clock, Effect, Option, Context, Layer, Result } from "effect"
import { type NotFound, SfcStateDao } from "@microdcs/store"
import { indexesOf, start, type StartParams } from "@microdcs/sfc"
import { makeApplyLoop } from "./ApplyLoop.js"
import type { Applied, ExecutionError } from "./ApplyOutcome.js"
import { BoundedMap } from "./BoundedMap.js"
import { CommandDispatch } from "./CommandDispatch.js"
import { makeCounterReads } from "./CounterReads.js"
import { newExecutionId } from "./ExecutionLogIds.js"
import { ExecutionLogWriter } from "./ExecutionLogWriter.js"
import { type ExecutionDeps, load, type LoadedExecution } from "./ExecutionStates.js"
import { writeMany } from "./ExecutionWrite.js"
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

/** Creates a job's execution (create-only: a second start of the same job does nothing). */
const create = (deps: ExecutionDeps, params: StartParams): Effect.Effect<Applied, ExecutionError> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const executionId = params.executionId ?? (deps.executionLog.enabled() ? newExecutionId(params.jobId, now) : undefined)
    const output = yield* deps.counters.run(params.scope, params.jobId, (values) => start({ ...params, executionId }, now, values))
    const [written] = yield* writeMany(deps, [{ expectedVersion: 0, output, appliedEvents: [] }])
    if (Result.isSuccess(written!)) return { _tag: "Written", output, version: written.success.version } satisfies Applied
    const error = written!.failure
    // Another start (or another instance) created it first.
    if (error._tag === "VersionConflict" || error._tag === "ScopeConflict" || error._tag === "DuplicateEvent") return { _tag: "Duplicate" } satisfies Applied
    return yield* Effect.fail(error)
  })

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
        due: wanted.due, active: wanted.active, waitsAdd: wanted.waits, waitsRemove: []
      })
      .pipe(Effect.catchTags({ VersionConflict: () => Effect.void, DuplicateEvent: () => Effect.void, ScopeConflict: (e) => Effect.die(e) }))
    return true
  })

/** Removes a job's execution and every index entry (the MES cleared or cancelled the job). */
const remove = (deps: ExecutionDeps, jobId: string): Effect.Effect<boolean, ExecutionError | NotFound> =>
  Effect.gen(function* () {
    const loaded = yield* load(deps, jobId)
    if (Option.isNone(loaded)) return false
    const waits = loaded.value.state.recipe.Actions.filter((a) => a.Interaction === "pull_event").map((a) => a.TypeId)
    deps.cache.delete(jobId)
    yield* deps.states.delete({ jobId, waits: [...new Set(waits)] }).pipe(
      Effect.catchTags({ NotFound: () => Effect.void, VersionConflict: () => Effect.void })
    )
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
      cache: new BoundedMap<string, LoadedExecution>(STATE_CACHE_SIZE)
    }
    const loop = yield* makeApplyLoop(deps)
    return {
      load: (jobId: string) => load(deps, jobId),
      create: (params: StartParams) => create(deps, params),
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
