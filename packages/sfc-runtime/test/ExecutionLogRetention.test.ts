import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Option } from "effect"
import { decodeExecution, ExecutionLogStore } from "@microdcs/store"
import { engineWorld, eventually, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { jobOrderFor, linearRecipe, pull, push, recipeWorkMaster, SCOPE, untilExecution, untilJobOrderIs } from "./RuntimeKit.js"
import { executionIdOf, hasExecutionRecord, withLogStore } from "./ExecutionLogKit.js"

// Retention removed the oldest executions beyond the cap whether they ran or not: with more
// running jobs than the cap, the logs of running jobs were cut, and the writer's next write of
// their record (on every node and at close) recreated a key outside `dag:log:executions`, which
// no retention removed again. Running executions now stay, and every record written is listed.

const recipe = linearRecipe(["Wait", "Unload"], [pull("wait", "Wait"), push("unload", "Unload")])

/** A world whose jobs wait at `Wait` until `release()`. */
const gatedWorld = () => {
  let released = false
  const world = engineWorld({ events: { "com.example.wait.v1": () => (released ? { arrived: true } : undefined) } })
  return { layer: withLogStore(world.layer), release: () => void (released = true) }
}

/** Starts a job and waits until it waits at `Wait` with its record written; returns its execution id. */
const startWaiting = (jobId: string) =>
  Effect.gen(function* () {
    yield* putJobOrder(SCOPE, jobOrderFor(jobId, "wm-gated"))
    yield* untilExecution(jobId, (s) => s.actions.some((a) => a.state === "waiting"))
    const executionId = yield* eventually(executionIdOf(jobId))
    yield* eventually(Effect.map(hasExecutionRecord(executionId), (has) => (has ? true : undefined)))
    return executionId
  })

/** The execution's record in Valkey once it is closed (the log is written off the critical path). */
const closedRecord = (executionId: string) =>
  Effect.flatMap(ExecutionLogStore, (store) =>
    eventually(
      Effect.gen(function* () {
        const bytes = Option.getOrUndefined(yield* store.readExec(executionId))
        const record = bytes === undefined ? undefined : Result.getOrUndefined(decodeExecution(yield* store.execKey(executionId), bytes))
        return record?.status === "running" ? undefined : record
      })
    )
  )

/** Once the job completed: its execution's last sequence number and how many of its nodes `0..lastSeq` are in Valkey. */
const closedLog = (jobId: string, executionId: string) =>
  Effect.gen(function* () {
    yield* untilJobOrderIs(jobId, "Ended_Completed")
    const { lastSeq } = yield* closedRecord(executionId)
    return { lastSeq, nodes: (yield* (yield* ExecutionLogStore).readNodes(executionId, 0, lastSeq)).length }
  })

describe("SFC engine: execution log retention with running jobs", () => {
  it.live("more running jobs than the cap: retention removes none of their logs, and a later run brings the count back to the cap", () => {
    const world = gatedWorld()
    return Effect.gen(function* () {
      const store = yield* ExecutionLogStore
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-gated", recipe))
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-quick", linearRecipe(["Only"], [push("only", "Only")])))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-quick", "wm-quick"))
      yield* untilJobOrderIs("jo-quick", "Ended_Completed")
      const quick = yield* eventually(executionIdOf("jo-quick"))
      yield* closedLog("jo-quick", quick)
      const running = [yield* startWaiting("jo-run-1"), yield* startWaiting("jo-run-2"), yield* startWaiting("jo-run-3")]
      // The writer's retention with a cap of 1: the closed job goes, the three running ones stay.
      expect(yield* store.retain(1)).toEqual([quick])
      expect(yield* store.oldestBeyond(0)).toEqual(running)
      world.release()
      for (const [i, executionId] of running.entries()) {
        const log = yield* closedLog(`jo-run-${i + 1}`, executionId)
        // The whole log, from the node the job opened with: nothing was cut while it ran.
        expect(log.nodes).toBe(log.lastSeq + 1)
      }
      // Every record is listed, so a later run brings the count back to the cap.
      expect(yield* store.oldestBeyond(0)).toEqual(running)
      expect(yield* store.retain(1)).toEqual(running.slice(0, 2))
      expect(yield* store.oldestBeyond(0)).toEqual(running.slice(2))
    }).pipe(Effect.provide(world.layer))
  })

  it.live("a running execution whose place was removed is listed again at its next write", () => {
    const world = gatedWorld()
    return Effect.gen(function* () {
      const store = yield* ExecutionLogStore
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-gated", recipe))
      const executionId = yield* startWaiting("jo-unlisted")
      // As a retention of an older version did: the running execution's record and place removed.
      yield* store.remove([{ executionId, lastSeq: -1 }])
      world.release()
      yield* closedLog("jo-unlisted", executionId)
      expect(yield* store.oldestBeyond(0)).toEqual([executionId])
    }).pipe(Effect.provide(world.layer))
  })
})
