import { Clock, Effect, Option, Context, Layer } from "effect"
import { type ConnectionError, type InvalidInput, type NotFound, SfcStateDao, StateMoved, type WrongType } from "@microdcs/store"
import { type EngineInput, type EngineOutput, type ExecutionState, indexesOf, start, type StartParams, step } from "@microdcs/sfc"
import { BoundedMap } from "./BoundedMap.js"
import { CommandDispatch } from "./CommandDispatch.js"
import { makeCounterReads } from "./CounterReads.js"
import type { CounterUnavailable } from "./CounterSource.js"
import { newExecutionId } from "./ExecutionLogIds.js"
import { ExecutionLogWriter } from "./ExecutionLogWriter.js"
import { type ExecutionDeps, load, type LoadedExecution } from "./ExecutionStates.js"
import { write } from "./ExecutionWrite.js"
import { RecipeSnapshots } from "./RecipeSnapshots.js"

export type { LoadedExecution } from "./ExecutionStates.js"

/** How often a write re-reads and recomputes after losing the CAS to another engine instance. */
const MAX_CAS_ATTEMPTS = 20

/** Execution states one process keeps in memory (the jobs it moved last). */
const STATE_CACHE_SIZE = 10_000

/** The outcome of applying one input to a job's execution. */
export type Applied =
  | { readonly _tag: "Written"; readonly output: EngineOutput; readonly version: number }
  | { readonly _tag: "Unchanged"; readonly output: EngineOutput }
  /** The event was applied before (to `jobId`, when the store says which job). */
  | { readonly _tag: "Duplicate"; readonly jobId?: string | undefined }
  | { readonly _tag: "NoExecution" }

const noExecution = Effect.succeed<Applied>({ _tag: "NoExecution" })

/** The index entries of a job as Valkey holds them (what reconcile compares a state against). */
export interface IndexEntries {
  readonly due: number | null
  readonly active: boolean
}

/** `CounterUnavailable`: counters a transition needs could not be read; nothing moved, retry later. */
export type ExecutionError = InvalidInput | WrongType | ConnectionError | StateMoved | CounterUnavailable

type StepInput = EngineInput | ((state: ExecutionState) => EngineInput)
type AppliedEvent = { readonly source: string; readonly id: string }

/** Creates a job's execution (create-only: a second start of the same job does nothing). */
const create = (deps: ExecutionDeps, params: StartParams): Effect.Effect<Applied, ExecutionError> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const executionId = params.executionId ?? (deps.executionLog.enabled() ? newExecutionId(params.jobId, now) : undefined)
    const output = yield* deps.counters.run(params.scope, params.jobId, (values) => start({ ...params, executionId }, now, values))
    return yield* write(deps, 0, output).pipe(
      Effect.map((written): Applied => ({ _tag: "Written", output, version: written.version })),
      Effect.catchTags({
        VersionConflict: () => Effect.succeed<Applied>({ _tag: "Duplicate" }),
        ScopeConflict: () => Effect.succeed<Applied>({ _tag: "Duplicate" }),
        DuplicateEvent: () => Effect.succeed<Applied>({ _tag: "Duplicate" })
      })
    )
  })

// The apply loop below passes its arguments one by one instead of as a record: it runs once per step.

/** One attempt: from the cached state when there is one, else from a fresh read. */
const applyAttempt = (
  deps: ExecutionDeps,
  jobId: string,
  input: StepInput,
  appliedEvent: AppliedEvent | undefined,
  cached: LoadedExecution | undefined,
  attempt: number
): Effect.Effect<Applied, ExecutionError> => {
  if (attempt > MAX_CAS_ATTEMPTS) return Effect.fail(new StateMoved({ key: jobId, attempts: MAX_CAS_ATTEMPTS }))
  if (cached !== undefined) return applyTo(deps, jobId, input, appliedEvent, cached, true, attempt)
  return Effect.flatMap(load(deps, jobId), (loaded) =>
    Option.isNone(loaded) ? noExecution : applyTo(deps, jobId, input, appliedEvent, loaded.value, false, attempt)
  )
}

/** A write that failed: recomputed from a fresh read when another instance moved the job, else its outcome. */
const afterFailedWrite = (
  deps: ExecutionDeps,
  jobId: string,
  input: StepInput,
  appliedEvent: AppliedEvent | undefined,
  attempt: number,
  error: Effect.Error<ReturnType<typeof write>>
): Effect.Effect<Applied, ExecutionError> => {
  switch (error._tag) {
    // Another instance moved the job: read again and recompute.
    case "VersionConflict":
      deps.cache.delete(jobId)
      return applyAttempt(deps, jobId, input, appliedEvent, undefined, attempt + 1)
    case "DuplicateEvent":
      return Effect.succeed<Applied>({ _tag: "Duplicate", jobId: error.jobId })
    case "ScopeConflict":
      return Effect.die(error)
    default:
      return Effect.fail(error)
  }
}

const applyTo = (
  deps: ExecutionDeps,
  jobId: string,
  input: StepInput,
  appliedEvent: AppliedEvent | undefined,
  loaded: LoadedExecution,
  fromCache: boolean,
  attempt: number
): Effect.Effect<Applied, ExecutionError> =>
  Effect.clockWith((clock) => {
    const now = clock.currentTimeMillisUnsafe()
    const { state, version } = loaded
    // A state stored before the log (or while it was off) gets its execution id on this touch.
    const freshId = state.log === undefined && deps.executionLog.enabled() ? newExecutionId(jobId, state.startedAt) : undefined
    const stepInput = typeof input === "function" ? input(state) : input
    // Counters the transitions name are read first; the core itself reads nothing.
    return Effect.flatMap(deps.counters.run(state.scope, jobId, (values) => step(state, stepInput, now, freshId, values)), (output) => {
      // A cached state may be behind another instance's write: "nothing to do" is only
      // believed from a fresh read.
      if (!output.changed && fromCache) return applyAttempt(deps, jobId, input, appliedEvent, undefined, attempt + 1)
      if (!output.changed) return Effect.succeed<Applied>({ _tag: "Unchanged", output })
      return Effect.matchEffect(write(deps, version, output, appliedEvent), {
        onSuccess: (written) => Effect.succeed<Applied>({ _tag: "Written", output, version: written.version }),
        onFailure: (error) => afterFailedWrite(deps, jobId, input, appliedEvent, attempt, error)
      })
    })
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
    return {
      load: (jobId: string) => load(deps, jobId),
      create: (params: StartParams) => create(deps, params),
      /**
       * Applies one input; `input` may depend on the state read (e.g. outage bounds). An
       * `appliedEvent` is recorded in the same write, so a redelivered event is a no-op. Plain
       * combinators, not a generator: this runs once per step.
       */
      apply: (jobId: string, input: StepInput, appliedEvent?: AppliedEvent): Effect.Effect<Applied, ExecutionError> =>
        applyAttempt(deps, jobId, input, appliedEvent, deps.cache.get(jobId), 1),
      reindex: <E = never, R = never>(jobId: string, present: IndexEntries | Effect.Effect<IndexEntries, E, R>) => reindex(deps, jobId, present),
      remove: (jobId: string) => remove(deps, jobId)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies.pipe(Layer.provide([CommandDispatch.Default, RecipeSnapshots.Default, ExecutionLogWriter.Default]))
}
