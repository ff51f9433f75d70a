import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { InProcessStation, SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc-runtime"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { putJobOrder, putWorkMaster, testStore, untilJobOrderIs } from "@microdcs/testkit"
import { islandView } from "../src/ConsoleIslandView.js"
import { makeMetrics } from "../src/Metrics.js"

/**
 * Issue 21: the engine's execution log dropped writes and only a WARN line said so. The island
 * page shows this daemon's writer: the writes dropped (`microdcs_execution_log_dropped_total`)
 * and its queue and batches. Run in process over the view function the page's route calls.
 */

const SCOPE = "line-view"

const oneStepWorkMaster = {
  ID: "wm-one",
  dataschema: RECIPE_SCHEMA_ID,
  data: {
    Steps: [{ Name: "Only", Initial: true }],
    Transitions: [],
    Actions: [{ Name: "only", Step: "Only", Qualifier: "N", Interaction: "push_command", TypeId: "com.example.only.v1", TimeoutSeconds: 60 }]
  }
}

const readiness = Effect.succeed({ checks: { valkey: true }, roles: {}, problems: [] })

/** An engine whose log queue holds nothing: every log write of its jobs is dropped and counted. */
const engineDroppingItsLog = SfcEngineProcesses({ consumer: "view-engine", executionLogQueueSize: 0 }).pipe(
  Layer.provideMerge(InProcessStation().layer),
  Layer.provideMerge(SfcRuntimeServices),
  Layer.provideMerge(testStore())
)

describe("the console's island view", () => {
  it.live("shows the execution log writes this daemon dropped and its writer's queue", () =>
    Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, oneStepWorkMaster)
      yield* putJobOrder(SCOPE, { JobOrderID: "jo-view-1", WorkMasterID: [{ ID: oneStepWorkMaster.ID }] })
      yield* untilJobOrderIs("jo-view-1", "Ended_Completed")
      const view = yield* islandView(readiness, makeMetrics())
      expect(view.executionLog.dropped).toBeGreaterThan(0)
      expect(view.executionLog.writer).toMatchObject({ queued: 0, queueSize: 0, written: 0, batches: 0, removed: 0, retentionFailures: 0 })
    }).pipe(Effect.provide(engineDroppingItsLog))
  )

  it.live("without an engine in this daemon, the writer is null and only the counter is shown", () =>
    Effect.gen(function* () {
      const view = yield* islandView(readiness, makeMetrics())
      expect(view.executionLog.writer).toBeNull()
      expect(typeof view.executionLog.dropped).toBe("number")
    }).pipe(Effect.provide(testStore()))
  )
})
