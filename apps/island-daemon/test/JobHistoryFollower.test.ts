import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { InProcessStation, SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc-runtime"
import { eventually } from "@microdcs/test-utils"
import { putJobOrder, putWorkMaster, testStore, untilJobOrderIs } from "@microdcs/testkit"
import { makeJobHistory } from "../src/JobHistory.js"
import { catchUp, followHistory } from "../src/JobHistoryFollower.js"

/**
 * The history's follower over a real change stream: jobs run by an engine in this process, the
 * follower backfills what the stream holds, follows new entries, and a follower started again on
 * the same history (as after the island reconnects) misses nothing and counts nothing twice.
 */

const SCOPE = "line-history"
const workMaster = {
  ID: "wm-history",
  dataschema: RECIPE_SCHEMA_ID,
  data: {
    Steps: [{ Name: "Only", Initial: true }],
    Transitions: [],
    Actions: [{ Name: "only", Step: "Only", Qualifier: "N", Interaction: "push_command", TypeId: "com.example.only.v1", TimeoutSeconds: 60 }]
  }
}

const engine = SfcEngineProcesses({ consumer: "history-engine" }).pipe(
  Layer.provideMerge(InProcessStation().layer),
  Layer.provideMerge(SfcRuntimeServices),
  Layer.provideMerge(testStore())
)

const runJobs = (ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    for (const id of ids) yield* putJobOrder(SCOPE, { JobOrderID: id, WorkMasterID: [{ ID: workMaster.ID }] })
    for (const id of ids) yield* untilJobOrderIs(id, "Ended_Completed")
  })

const totals = (history: ReturnType<typeof makeJobHistory>) => {
  const now = Date.now()
  const [p] = history.points(SCOPE, { from: now - 3_600_000, to: now + 60_000, stepMs: 3_600_000 + 60_000 })
  const minutes = 61
  return { started: Math.round(p!.started * minutes), completed: Math.round(p!.completed * minutes), runs: p!.p50 !== null }
}

describe("the job history's follower", () => {
  it.live("backfills the stream, follows it, and a follower started again misses nothing and counts nothing twice", () =>
    Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, workMaster)
      yield* runJobs(["jo-h-1", "jo-h-2", "jo-h-3"])
      const history = makeJobHistory()
      const seen: Array<string> = []
      const onEvent = (_scope: string, entry: { id: string }, event: { event: string }) => void seen.push(`${event.event} ${entry.id}`)
      // Backfill: what the stream holds.
      yield* catchUp(history, onEvent)
      expect(totals(history)).toEqual({ started: 3, completed: 3, runs: true })

      const first = yield* Effect.forkChild(followHistory(history, onEvent))
      yield* runJobs(["jo-h-4", "jo-h-5"])
      yield* eventually(Effect.sync(() => (totals(history).completed === 5 ? true : undefined)))
      yield* Fiber.interrupt(first)

      // Jobs run while no follower runs, then another follower takes over the same history.
      yield* runJobs(["jo-h-6", "jo-h-7"])
      expect(totals(history).completed).toBe(5)
      const second = yield* Effect.forkChild(followHistory(history, onEvent))
      yield* eventually(Effect.sync(() => (totals(history).completed === 7 ? true : undefined)))
      yield* Fiber.interrupt(second)
      yield* catchUp(history, onEvent)

      expect(totals(history)).toEqual({ started: 7, completed: 7, runs: true })
      const ids = Array.from({ length: 7 }, (_, i) => `jo-h-${i + 1}`)
      expect([...seen].sort()).toEqual([...ids.map((id) => `completed ${id}`), ...ids.map((id) => `started ${id}`)].sort())
      expect(history.scopes()).toEqual([SCOPE])
      expect(history.openRuns(SCOPE)).toBe(0)
    }).pipe(Effect.provide(engine))
  , 60_000)
})
