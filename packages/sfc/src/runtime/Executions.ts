import { Clock, Deferred, Effect, Option } from "effect"
import {
  type ConnectionError,
  type InvalidInput,
  type NotFound,
  SfcStateDao,
  StateMoved,
  type WrongType
} from "@microdcs/store"
import { type EngineInput, type EngineOutput, indexesOf, start, type StartParams, step } from "../engine/Engine.js"
import { type ExecutionState, isTerminalStatus } from "../engine/ExecutionState.js"
import type { CommandEntry, JobOrderEntry, JobResponseEntry } from "../engine/Outbox.js"
import { BoundedMap } from "./BoundedMap.js"
import { CommandDispatch, type DirectSendOutcome } from "./CommandDispatch.js"
import { makeCounterReads } from "./CounterReads.js"
import type { CounterUnavailable } from "./CounterSource.js"
import { encodeOutboxEntry } from "./OutboxCodec.js"
import { newExecutionId } from "./ExecutionLogIds.js"
import { ExecutionLogWriter } from "./ExecutionLogWriter.js"
import { RecipeSnapshots } from "./RecipeSnapshots.js"

/** How often a write re-reads and recomputes after losing the CAS to another engine instance. */
const MAX_CAS_ATTEMPTS = 20

/** Execution states one process keeps in memory (the jobs it moved last). */
const STATE_CACHE_SIZE = 10_000

export interface LoadedExecution {
  readonly state: ExecutionState
  readonly version: number
}

/** The outcome of applying one input to a job's execution. */
export type Applied =
  | { readonly _tag: "Written"; readonly output: EngineOutput; readonly version: number }
  | { readonly _tag: "Unchanged"; readonly output: EngineOutput }
  /** The event was applied before (to `jobId`, when the store says which job). */
  | { readonly _tag: "Duplicate"; readonly jobId?: string | undefined }
  | { readonly _tag: "NoExecution" }

/** The index entries of a job as Valkey holds them (what reconcile compares a state against). */
export interface IndexEntries {
  readonly due: number | null
  readonly active: boolean
}

/** `CounterUnavailable`: counters a transition needs could not be read; nothing moved, retry later. */
export type ExecutionError = InvalidInput | WrongType | ConnectionError | StateMoved | CounterUnavailable

/**
 * Reads execution states, runs the pure core on them and writes the result with the one CAS
 * script. A lost CAS means another instance moved the job: read again and recompute.
 */
export class Executions extends Effect.Service<Executions>()("@microdcs/sfc/Executions", {
  dependencies: [CommandDispatch.Default, RecipeSnapshots.Default, ExecutionLogWriter.Default],
  effect: Effect.gen(function* () {
    const states = yield* SfcStateDao
    const dispatch = yield* CommandDispatch
    const snapshots = yield* RecipeSnapshots
    const executionLog = yield* ExecutionLogWriter
    // Counters named by transitions are read before the core runs (CounterReads.ts).
    const counters = yield* makeCounterReads

    // The states this process wrote last, with their store version: the next input of a job
    // starts from here instead of re-reading it. Another instance's write meanwhile shows as a
    // VersionConflict of the CAS, and the loop below re-reads and recomputes.
    const cache = new BoundedMap<string, LoadedExecution>(STATE_CACHE_SIZE)

    const load = (jobId: string): Effect.Effect<Option.Option<LoadedExecution>, InvalidInput | WrongType | ConnectionError> =>
      states.get(jobId).pipe(
        Effect.flatMap((doc) => {
          return snapshots.decodeState(doc.doc).pipe(
            Effect.map((state) => {
              const loaded = { state, version: doc.version }
              remember(jobId, loaded)
              return Option.some(loaded)
            })
          )
        }),
        Effect.catchTag("NotFound", () => Effect.sync(() => cache.delete(jobId)).pipe(Effect.as(Option.none())))
      )

    const remember = (jobId: string, loaded: LoadedExecution) => {
      if (isTerminalStatus(loaded.state.status)) cache.delete(jobId)
      else cache.set(jobId, loaded)
    }

    /**
     * One CAS; on success the commands it emitted go to the station at once, from here (the
     * outbox entries stay the recovery path, see CommandDispatch).
     */
    const write = (expectedVersion: number, output: EngineOutput, appliedEvent?: { source: string; id: string }) => {
      const sender = dispatch.current()
      const commands = sender ? output.outbox.filter((entry): entry is CommandEntry => entry.type === "command") : []
      const run = (pending: ReadonlyArray<Deferred.Deferred<DirectSendOutcome>>) => Effect.gen(function* () {
        const written = yield* states
          .compareAndSet({
            jobId: output.state.jobId,
            scope: output.state.scope,
            expectedVersion,
            doc: snapshots.encodeState(output.state),
            entries: output.outbox.map((entry) =>
              encodeOutboxEntry(entry, expectedVersion + 1, sender && entry.type === "command" ? sender.consumer : undefined)
            ),
            due: output.due,
            active: output.active,
            waitsAdd: output.waitsAdd,
            waitsMove: output.waitsMove,
            waitsRemove: output.waitsRemove,
            appliedEvent,
            // This instance carries out every entry itself (sends, moves, the response): no nudge
            // for entries that need no handler now; the fallback poll reads them (and handles any
            // that did not land from here).
            nudge: sender === undefined,
            // The CAS sets the pointers and reads the job order for the send: no round trip more.
            directSend:
              sender && commands.length > 0
                ? { correlationIds: commands.map((c) => c.correlationId), pointerTtlMs: sender.correlationTtlMs, readJobOrder: true }
                : undefined
          })

        remember(output.state.jobId, { state: output.state, version: written.version })
        // The log after the CAS, never waited for (queued from plain code; dropped and counted when full).
        executionLog.offer(output.state.scope, output.log)
        // Not interruptible: a send once started is waited for and its outcome recorded, so a
        // writer stopped meanwhile never counts as unsent a command the station may have (sent
        // again then by the outbox handler or the restarted instance). Each wait is bounded: by
        // the send's timeout, and by the shutdown grace once the engine stops (see DirectSend).
        if (sender) yield* Effect.uninterruptible(Effect.gen(function* () {
          let at = 0
          let nth = 0
          for (const entry of output.outbox) {
            const entryId = written.entryIds?.[at++]
            if (entry.type !== "command") continue
            const outcome = yield* sender.handle(entry, output.state, entryId, written.jobOrderDoc)
            dispatch.settle(entry, pending[nth++]!, outcome)
          }
          // After the sends (Run lands with the first command): moves and the response, not waited for.
          const rest = output.outbox.filter((entry): entry is JobOrderEntry | JobResponseEntry => entry.type !== "command")
          sender.carryOut(rest, written.version, output.state.scope)
        }))
        return written
      })
      // Whatever ends the write (a lost CAS, an error, an interruption), no handler of this
      // process may wait for a send that will not come: what is unsettled counts as not sent.
      if (commands.length === 0) return run([])
      return Effect.acquireUseRelease(Effect.sync(() => dispatch.begin(commands)), run, (pending) =>
        Effect.sync(() => commands.forEach((command, i) => dispatch.settle(command, pending[i]!, false)))
      )
    }

    /** Creates a job's execution (create-only: a second start of the same job does nothing). */
    const create = (params: StartParams): Effect.Effect<Applied, ExecutionError> =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const executionId = params.executionId ?? (executionLog.enabled() ? newExecutionId(params.jobId, now) : undefined)
        const output = yield* counters.run(params.scope, params.jobId, (values) => start({ ...params, executionId }, now, values))
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
        let cached = cache.get(jobId)
        for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
          const fromCache = cached !== undefined
          const loaded = cached !== undefined ? Option.some(cached) : yield* load(jobId)
          cached = undefined
          if (Option.isNone(loaded)) return { _tag: "NoExecution" } as const
          const { state, version } = loaded.value
          const now = yield* Clock.currentTimeMillis
          // A state stored before the log (or while it was off) gets its execution id on this touch.
          const freshId = state.log === undefined && executionLog.enabled() ? newExecutionId(jobId, state.startedAt) : undefined
          const stepInput = typeof input === "function" ? input(state) : input
          // Counters the transitions name are read first; the core itself reads nothing.
          const output = yield* counters.run(state.scope, jobId, (values) => step(state, stepInput, now, freshId, values))
          // A cached state may be behind another instance's write: "nothing to do" is only
          // believed from a fresh read.
          if (!output.changed && fromCache) continue
          if (!output.changed) return { _tag: "Unchanged", output } as const
          const result = yield* write(version, output, appliedEvent).pipe(
            Effect.map((written): Applied => ({ _tag: "Written", output, version: written.version })),
            Effect.catchTags({
              VersionConflict: () => Effect.sync(() => void cache.delete(jobId)),
              DuplicateEvent: (e) => Effect.succeed<Applied>({ _tag: "Duplicate", jobId: e.jobId }),
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
    const reindex = <E = never, R = never>(
      jobId: string,
      present: IndexEntries | Effect.Effect<IndexEntries, E, R>
    ) =>
      Effect.gen(function* () {
        const loaded = yield* load(jobId)
        if (Option.isNone(loaded)) return false
        const { state, version } = loaded.value
        // Read after the state: an index entry written after this read came with a newer
        // version, so the CAS below conflicts instead of rewriting a state that had moved.
        const found = Effect.isEffect(present) ? yield* present : present
        const wanted = indexesOf(state)
        if (wanted.due === found.due && wanted.active === found.active) return false
        yield* states
          .compareAndSet({
            jobId, scope: state.scope, expectedVersion: version, doc: snapshots.encodeState(state), entries: [],
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
        cache.delete(jobId)
        yield* states.delete({ jobId, waits: [...new Set(waits)] }).pipe(
          Effect.catchTags({ NotFound: () => Effect.void, VersionConflict: () => Effect.void })
        )
        return true
      })

    return { load, create, apply, reindex, remove } as const
  })
}) {}
