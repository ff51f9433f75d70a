import { Clock, Deferred, Effect, Option } from "effect"
import {
  type ConnectionError,
  type InvalidInput,
  type NotFound,
  SfcStateDao,
  type SfcWritten,
  StateMoved,
  type WrongType
} from "@microdcs/store"
import { type EngineInput, type EngineOutput, indexesOf, start, type StartParams, step } from "../engine/Engine.js"
import { type ExecutionState, isTerminalStatus } from "../engine/ExecutionState.js"
import type { CommandEntry, JobOrderEntry, JobResponseEntry } from "../engine/Outbox.js"
import { BoundedMap } from "./BoundedMap.js"
import { CommandDispatch, type DirectSender, type DirectSendOutcome } from "./CommandDispatch.js"
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

const noExecution = Effect.succeed<Applied>({ _tag: "NoExecution" })

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
     * outbox entries stay the recovery path, see CommandDispatch). Written in plain combinators:
     * this runs once per step.
     */
    const write = (expectedVersion: number, output: EngineOutput, appliedEvent?: { source: string; id: string }) => {
      const sender = dispatch.current()
      const commands = sender ? output.outbox.filter((entry): entry is CommandEntry => entry.type === "command") : []
      const run = (pending: ReadonlyArray<Deferred.Deferred<DirectSendOutcome>>) =>
        Effect.flatMap(
          states.compareAndSet({
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
          }),
          (written) => {
            remember(output.state.jobId, { state: output.state, version: written.version })
            // The log after the CAS, never waited for (queued from plain code; dropped and counted when full).
            executionLog.offer(output.state.scope, output.log)
            if (!sender) return Effect.succeed(written)
            // Not interruptible: a send once started is waited for and its outcome recorded, so a
            // writer stopped meanwhile never counts as unsent a command the station may have (sent
            // again then by the outbox handler or the restarted instance). Each wait is bounded: by
            // the send's timeout, and by the shutdown grace once the engine stops (see DirectSend).
            return Effect.as(Effect.uninterruptible(sendFrom(sender, output, written, pending, 0, 0)), written)
          }
        )
      // Whatever ends the write (a lost CAS, an error, an interruption), no handler of this
      // process may wait for a send that will not come: what is unsettled counts as not sent.
      if (commands.length === 0) return run([])
      return Effect.acquireUseRelease(Effect.sync(() => dispatch.begin(commands)), run, (pending) =>
        Effect.sync(() => commands.forEach((command, i) => dispatch.settle(command, pending[i]!, false)))
      )
    }

    /**
     * The sends of a write's commands from outbox entry `at` on, one after the other (`nth`: the
     * command's place among the write's commands); after the last, the moves and the response,
     * not waited for (Run lands with the first command).
     */
    const sendFrom = (
      sender: DirectSender,
      output: EngineOutput,
      written: SfcWritten,
      pending: ReadonlyArray<Deferred.Deferred<DirectSendOutcome>>,
      at: number,
      nth: number
    ): Effect.Effect<void> => {
      const outbox = output.outbox
      while (at < outbox.length && outbox[at]!.type !== "command") at++
      if (at === outbox.length) {
        sender.carryOut(outbox.filter((entry): entry is JobOrderEntry | JobResponseEntry => entry.type !== "command"), written.version, output.state.scope)
        return Effect.void
      }
      const entry = outbox[at] as CommandEntry
      return Effect.flatMap(sender.handle(entry, output.state, written.entryIds?.[at], written.jobOrderDoc), (outcome) => {
        dispatch.settle(entry, pending[nth]!, outcome)
        return sendFrom(sender, output, written, pending, at + 1, nth + 1)
      })
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
     * `appliedEvent` is recorded in the same write, so a redelivered event is a no-op. Plain
     * combinators, not a generator: this runs once per step.
     */
    const apply = (
      jobId: string,
      input: EngineInput | ((state: ExecutionState) => EngineInput),
      appliedEvent?: { readonly source: string; readonly id: string }
    ): Effect.Effect<Applied, ExecutionError> => applyAttempt(jobId, input, appliedEvent, cache.get(jobId), 1)

    /** One attempt: from the cached state when there is one, else from a fresh read. */
    const applyAttempt = (
      jobId: string,
      input: EngineInput | ((state: ExecutionState) => EngineInput),
      appliedEvent: { readonly source: string; readonly id: string } | undefined,
      cached: LoadedExecution | undefined,
      attempt: number
    ): Effect.Effect<Applied, ExecutionError> => {
      if (attempt > MAX_CAS_ATTEMPTS) return Effect.fail(new StateMoved({ key: jobId, attempts: MAX_CAS_ATTEMPTS }))
      if (cached !== undefined) return applyTo(jobId, input, appliedEvent, cached, true, attempt)
      return Effect.flatMap(load(jobId), (loaded) =>
        Option.isNone(loaded) ? noExecution : applyTo(jobId, input, appliedEvent, loaded.value, false, attempt)
      )
    }

    const applyTo = (
      jobId: string,
      input: EngineInput | ((state: ExecutionState) => EngineInput),
      appliedEvent: { readonly source: string; readonly id: string } | undefined,
      loaded: LoadedExecution,
      fromCache: boolean,
      attempt: number
    ): Effect.Effect<Applied, ExecutionError> =>
      Effect.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        const { state, version } = loaded
        // A state stored before the log (or while it was off) gets its execution id on this touch.
        const freshId = state.log === undefined && executionLog.enabled() ? newExecutionId(jobId, state.startedAt) : undefined
        const stepInput = typeof input === "function" ? input(state) : input
        // Counters the transitions name are read first; the core itself reads nothing.
        return Effect.flatMap(counters.run(state.scope, jobId, (values) => step(state, stepInput, now, freshId, values)), (output) => {
          // A cached state may be behind another instance's write: "nothing to do" is only
          // believed from a fresh read.
          if (!output.changed && fromCache) return applyAttempt(jobId, input, appliedEvent, undefined, attempt + 1)
          if (!output.changed) return Effect.succeed<Applied>({ _tag: "Unchanged", output })
          return Effect.matchEffect(write(version, output, appliedEvent), {
            onSuccess: (written) => Effect.succeed<Applied>({ _tag: "Written", output, version: written.version }),
            onFailure: (error) => {
              switch (error._tag) {
                // Another instance moved the job: read again and recompute.
                case "VersionConflict":
                  cache.delete(jobId)
                  return applyAttempt(jobId, input, appliedEvent, undefined, attempt + 1)
                case "DuplicateEvent":
                  return Effect.succeed<Applied>({ _tag: "Duplicate", jobId: error.jobId })
                case "ScopeConflict":
                  return Effect.die(error)
                default:
                  return Effect.fail(error)
              }
            }
          })
        })
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
