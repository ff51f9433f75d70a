import { Clock, Effect } from "effect"
import { ScopeRegistry, SfcStateDao, Valkey } from "@microdcs/store"
import type { EngineOptions } from "./EngineOptions.js"
import { Executions } from "./Executions.js"

/** Jobs taken per scope per sweep; the rest wait for the next round. */
const DUE_BATCH = 200

/**
 * One round of the timer sweep (sfc.md §3 Timeouts, Outage grace). It swaps in a new heartbeat
 * atomically (`SET ... GET`), so of several instances exactly one sees an outage; if the previous
 * heartbeat is older than the threshold, every active job first gets its deadlines that fell
 * inside the outage moved back. Then every due job gets a tick.
 */
export const sweepOnce = (options: EngineOptions) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const scopes = yield* ScopeRegistry
    const states = yield* SfcStateDao
    const executions = yield* Executions
    const now = yield* Clock.currentTimeMillis
    const heartbeatKey = valkey.keys.key("sfcHeartbeat", {}) as string
    const previous = yield* valkey.command("heartbeat", (c) => c.set(heartbeatKey, String(now), "GET"))
    const last = previous === null ? undefined : Number(previous)
    const allScopes = yield* scopes.list
    let ticked = 0
    if (last !== undefined && Number.isFinite(last) && now - last > options.outageThresholdMs) {
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
