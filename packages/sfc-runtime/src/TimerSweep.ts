import { Clock, Effect, Exit, Option } from "effect"
import { ScopeRegistry, SfcHeartbeat, SfcStateDao } from "@microdcs/store"
import type { EngineOptions } from "./EngineOptions.js"
import { Executions } from "./Executions.js"

/** Jobs taken per scope per sweep; the rest wait for the next round. */
const DUE_BATCH = 200

/** The round fails with the first input that failed (after every input was answered). */
const allApplied = <A, E, E2>(applied: Effect.Effect<ReadonlyArray<Exit.Exit<A, E>>, E2>) =>
  Effect.flatMap(applied, (exits) => {
    const failed = exits.find(Exit.isFailure)
    return failed === undefined ? Effect.void : Effect.failCause(failed.cause)
  })

/**
 * One round of the timer sweep. It swaps in a new heartbeat
 * atomically (`SET ... GET`), so of several instances exactly one sees an outage; if the previous
 * heartbeat is older than the threshold, every active job first gets its deadlines that fell
 * inside the outage moved back. Then every due job gets a tick: the due jobs of a scope
 * go to the engine's loop in one call, so they share ticks instead of a fiber each.
 */
export const sweepOnce = (options: EngineOptions) =>
  Effect.gen(function* () {
    const heartbeat = yield* SfcHeartbeat
    const scopes = yield* ScopeRegistry
    const states = yield* SfcStateDao
    const executions = yield* Executions
    const now = yield* Clock.currentTimeMillis
    const last = Option.getOrUndefined(yield* heartbeat.swap(now))
    const allScopes = yield* scopes.list
    if (last !== undefined && now - last > options.outageThresholdMs) {
      yield* Effect.logWarning("outage detected: moving deadlines back").pipe(Effect.annotateLogs({ outageMs: now - last }))
      for (const scope of allScopes) {
        const active = yield* states.listActive(scope)
        yield* allApplied(executions.applyAll(active.map((jobId) => ({ jobId, input: { type: "outage", from: last, to: now } }))))
      }
    }
    // A scope whose ticks fail (a counter source that is down for a waiting step's re-read) does
    // not hold back the scopes after it: every scope is ticked, then the round fails.
    const rounds = yield* Effect.forEach(allScopes, (scope) =>
      Effect.exit(
        Effect.gen(function* () {
          const due = yield* states.due(scope, now, DUE_BATCH)
          yield* allApplied(executions.applyAll(due.map(({ jobId }) => ({ jobId, input: { type: "tick" } }))))
          return due.length
        })
      )
    )
    const failed = rounds.find(Exit.isFailure)
    if (failed !== undefined) return yield* Effect.failCause(failed.cause)
    return rounds.reduce((sum, round) => sum + (Exit.isSuccess(round) ? round.value : 0), 0)
  })
