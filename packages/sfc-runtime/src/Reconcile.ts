import { Effect, Result, Option } from "effect"
import { decodeJobOrderRecord } from "@microdcs/job-state"
import { IndexScores, JobOrderDao, type JobOrderPage, ScopeRegistry, SfcStateDao } from "@microdcs/store"
import type { EngineOptions } from "./EngineOptions.js"
import { Executions } from "./Executions.js"
import { startJob } from "./StartJob.js"

export interface ReconcileReport {
  readonly started: number
  readonly reindexed: number
}

/**
 * The safety net under the change stream: starts job orders that are
 * `AllowedToStart` with a recipe but have no execution (their change entry was trimmed or lost),
 * and repairs active jobs whose due entry went missing.
 */
export const reconcileOnce = (options: EngineOptions) =>
  Effect.gen(function* () {
    const scores = yield* IndexScores
    const scopes = yield* ScopeRegistry
    const jobOrders = yield* JobOrderDao
    const states = yield* SfcStateDao
    const executions = yield* Executions
    let started = 0
    let reindexed = 0
    for (const scope of yield* scopes.list) {
      for (let offset: number | null = 0; offset !== null; ) {
        const page: JobOrderPage = yield* jobOrders.list(scope, { offset, count: 200 })
        for (const { id } of page.items) {
          const doc = yield* jobOrders.get(id).pipe(Effect.option)
          if (doc._tag === "None") continue
          const decoded = decodeJobOrderRecord(doc.value.doc)
          if (Result.isFailure(decoded) || decoded.success.state.main !== "AllowedToStart") continue
          if ((yield* startJob(id, options)) === "started") started++
        }
        offset = page.next
      }
      for (const jobId of yield* states.listActive(scope)) {
        const present = Effect.map(scores.sfcDeadline(scope, jobId), (due) => ({ due: Option.getOrNull(due), active: true }))
        if (yield* executions.reindex(jobId, present)) reindexed++
      }
    }
    return { started, reindexed } satisfies ReconcileReport
  })
