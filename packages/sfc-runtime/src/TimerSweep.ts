import { Clock, Effect, Option } from "effect"
import { ScopeRegistry, SfcHeartbeat, SfcStateDao } from "@microdcs/store"
import type { EngineOptions } from "./EngineOptions.js"
import { Executions } from "./Executions.js"

/** Jobs taken per scope per sweep; the rest wait for the next round. */
const DUE_BATCH = 200

/**
 * One round of the timer sweep. It swaps in a new heartbeat
 * atomically (`SET ... GET`), so of several instances exactly one sees an outage; if the previous
 * heartbeat is older than the threshold, every active job first gets its deadlines that fell
 * inside the outage moved back. Then every due job gets a tick.
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
    let ticked = 0
    if (last !== undefined && now - last > options.outageThresholdMs) {
      yield* Effect.logWarning("outage detected: moving deadlines back").pipe(Effect.annotateLogs({ outageMs: now - last }))
      for (const scope of allScopes) {
        const active = yield* states.listActive(scope)
        yield* Effect.forEach(active, (jobId) => executions.apply(jobId, { type: "outage", from: last, to: now }), {
          concurrency: 8,
          discard: true
        })
      }
    }
    for (const scope of allScopes) {
      const due = yield* states.due(scope, now, DUE_BATCH)
      ticked += due.length
      yield* Effect.forEach(due, ({ jobId }) => executions.apply(jobId, { type: "tick" }), { concurrency: 8, discard: true })
    }
    return ticked
  })
