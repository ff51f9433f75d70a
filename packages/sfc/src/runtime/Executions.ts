import { Clock, Effect, Option } from "effect"
import {
  type ConnectionError,
  type InvalidInput,
  type NotFound,
  SfcStateDao,
  StateMoved,
  type WrongType
} from "@microdcs/store"
import { type EngineInput, type EngineOutput, indexesOf, start, type StartParams, step } from "../engine/Engine.js"
import type { ExecutionState } from "../engine/ExecutionState.js"
import { encodeOutboxEntry } from "./OutboxCodec.js"

/** How often a write re-reads and recomputes after losing the CAS to another engine instance. */
const MAX_CAS_ATTEMPTS = 20

export interface LoadedExecution {
  readonly state: ExecutionState
  readonly version: number
}

/** The outcome of applying one input to a job's execution. */
export type Applied =
  | { readonly _tag: "Written"; readonly output: EngineOutput; readonly version: number }
  | { readonly _tag: "Unchanged"; readonly output: EngineOutput }
  | { readonly _tag: "Duplicate" }
  | { readonly _tag: "NoExecution" }

export type ExecutionError = InvalidInput | WrongType | ConnectionError | StateMoved

/**
 * Reads execution states, runs the pure core on them and writes the result with the one CAS
 * script. A lost CAS means another instance moved the job: read again and recompute.
 */
export class Executions extends Effect.Service<Executions>()("@microdcs/sfc/Executions", {
  effect: Effect.gen(function* () {
    const states = yield* SfcStateDao

    const load = (jobId: string): Effect.Effect<Option.Option<LoadedExecution>, InvalidInput | WrongType | ConnectionError> =>
      states.get(jobId).pipe(
        Effect.map((doc) => Option.some({ state: JSON.parse(doc.doc) as ExecutionState, version: doc.version })),
        Effect.catchTag("NotFound", () => Effect.succeed(Option.none()))
      )

    const write = (expectedVersion: number, output: EngineOutput, appliedEvent?: { source: string; id: string }) =>
      states.compareAndSet({
        jobId: output.state.jobId,
        scope: output.state.scope,
        expectedVersion,
        doc: JSON.stringify(output.state),
        entries: output.outbox.map((entry) => encodeOutboxEntry(entry, expectedVersion + 1)),
        due: output.due,
        active: output.active,
        waitsAdd: output.waitsAdd,
        waitsMove: output.waitsMove,
        waitsRemove: output.waitsRemove,
        appliedEvent
      })

    /** Creates a job's execution (create-only: a second start of the same job does nothing). */
    const create = (params: StartParams): Effect.Effect<Applied, ExecutionError> =>
      Effect.gen(function* () {
        const output = start(params, yield* Clock.currentTimeMillis)
        return yield* write(0, output).pipe(
          Effect.map((written): Applied => ({ _tag: "Written", output, version: written.version })),
          Effect.catchTags({
            VersionConflict: () => Effect.succeed<Applied>({ _tag: "Duplicate" }),
            ScopeConflict: () => Effect.succeed<Applied>({ _tag: "Duplicate" }),
            DuplicateEvent: () => Effect.succeed<Applied>({ _tag: "Duplicate" })
          })
        )
      })

    /**
     * Applies one input; `input` may depend on the state read (e.g. outage bounds). An
     * `appliedEvent` is recorded in the same write, so a redelivered event is a no-op.
     */
    const apply = (
      jobId: string,
      input: EngineInput | ((state: ExecutionState) => EngineInput),
      appliedEvent?: { readonly source: string; readonly id: string }
    ): Effect.Effect<Applied, ExecutionError> =>
      Effect.gen(function* () {
        for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
          const loaded = yield* load(jobId)
          if (Option.isNone(loaded)) return { _tag: "NoExecution" } as const
          const { state, version } = loaded.value
          const now = yield* Clock.currentTimeMillis
          const output = step(state, typeof input === "function" ? input(state) : input, now)
          if (!output.changed) return { _tag: "Unchanged", output } as const
          const result = yield* write(version, output, appliedEvent).pipe(
            Effect.map((written): Applied => ({ _tag: "Written", output, version: written.version })),
            Effect.catchTags({
              VersionConflict: () => Effect.succeed(undefined),
              DuplicateEvent: () => Effect.succeed<Applied>({ _tag: "Duplicate" }),
              ScopeConflict: (e) => Effect.die(e)
            })
          )
          if (result) return result
        }
        return yield* new StateMoved({ key: jobId, attempts: MAX_CAS_ATTEMPTS })
      })

    /**
     * Rewrites a state unchanged so that its due, active and waits entries match it again
     * (reconcile after a lost write or a manual edit). Returns false when nothing needed it.
     */
    const reindex = (jobId: string, present: { readonly due: number | null; readonly active: boolean }) =>
      Effect.gen(function* () {
        const loaded = yield* load(jobId)
        if (Option.isNone(loaded)) return false
        const { state, version } = loaded.value
        const wanted = indexesOf(state)
        if (wanted.due === present.due && wanted.active === present.active) return false
        yield* states
          .compareAndSet({
            jobId, scope: state.scope, expectedVersion: version, doc: JSON.stringify(state), entries: [],
            due: wanted.due, active: wanted.active, waitsAdd: wanted.waits, waitsRemove: []
          })
          .pipe(Effect.catchTags({ VersionConflict: () => Effect.void, DuplicateEvent: () => Effect.void, ScopeConflict: (e) => Effect.die(e) }))
        return true
      })

    /** Removes a job's execution and every index entry (the MES cleared or cancelled the job). */
    const remove = (jobId: string): Effect.Effect<boolean, ExecutionError | NotFound> =>
      Effect.gen(function* () {
        const loaded = yield* load(jobId)
        if (Option.isNone(loaded)) return false
        const waits = loaded.value.state.recipe.Actions.filter((a) => a.Interaction === "pull_event").map((a) => a.TypeId)
        yield* states.delete({ jobId, waits: [...new Set(waits)] }).pipe(
          Effect.catchTags({ NotFound: () => Effect.void, VersionConflict: () => Effect.void })
        )
        return true
      })

    return { load, create, apply, reindex, remove } as const
  })
}) {}
