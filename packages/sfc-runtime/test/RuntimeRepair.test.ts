import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { JobStates } from "@microdcs/job-state"
import { Valkey, WorkMasterDao } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { defaultEngineOptions, reconcileOnce, SfcEngineProcesses, SfcEvents } from "@microdcs/sfc-runtime"
import { engineWorld, putJobOrder, putWorkMaster, testEngineOptions } from "./RuntimeFixtures.js"
import {
  dueScore,
  executionOf,
  jobOrderFor,
  jobOrderState,
  linearRecipe,
  pull,
  push,
  recipeWorkMaster,
  SCOPE,
  untilExecution,
  responseSummary,
  untilResponse
} from "./RuntimeKit.js"

/** The recipe snapshot, and reconcile: the safety net under a lost change entry or due entry. */

const GO = "com.example.go.v1"

/** A recipe that waits for a `go` event, then sends `work`: the work master can change in between. */
const gated = (work: string) => linearRecipe(["Gate", "Work"], [pull("go", "Gate", { TypeId: GO }), push(work, "Work")])

const waitingForGo = (jobId: string) => untilExecution(jobId, (s) => s.actions.some((a) => a.action === "go" && a.state === "waiting"))

const go = (jobId: string) =>
  Effect.flatMap(SfcEvents, (events) => events.ingest({ scope: SCOPE, source: "urn:test", id: `go-${jobId}`, type: GO, jobId, data: {} }))

describe("SFC runtime: snapshot and reconcile", () => {
  it.live("a work master changed or deleted mid-run does not affect the running job", () => {
    const world = engineWorld({ onCommand: (c) => ({ data: { ran: c.action } }) })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-snap", gated("old-work")))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-snap-1", "wm-snap"))
      yield* waitingForGo("jo-snap-1")

      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-snap", gated("new-work")))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-snap-2", "wm-snap"))
      yield* waitingForGo("jo-snap-2")
      yield* Effect.flatMap(WorkMasterDao, (dao) => dao.delete({ id: "wm-snap" }))

      yield* go("jo-snap-1")
      yield* go("jo-snap-2")
      expect(responseSummary(yield* untilResponse("jo-snap-1"))).toMatchObject({ state: "Ended_Completed", data: { "old-work": { ran: "old-work" } } })
      expect(responseSummary(yield* untilResponse("jo-snap-2"))).toMatchObject({ state: "Ended_Completed", data: { "new-work": { ran: "new-work" } } })
      const sent = (jobId: string) => world.station.commands.filter((c) => c.jobId === jobId).map((c) => c.action)
      expect(sent("jo-snap-1")).toEqual(["old-work"])
      expect(sent("jo-snap-2")).toEqual(["new-work"])
      const first = yield* executionOf("jo-snap-1")
      expect(first?.state.recipe.Actions.map((a) => a.Name)).toEqual(["go", "old-work"])
      expect(first?.state.workMasterId).toBe("wm-snap")
    }).pipe(Effect.provide(world.layer))
  })

  it.live("reconcile starts a startable job order whose change entry the engine never acted on, and repairs a lost due entry", () => {
    // No engine processes at first: reconcile is driven by hand, then the engine takes over.
    const world = engineWorld({ onCommand: (c) => ({ data: { ran: c.action } }) }, { roles: { engine: false, sweep: false } })
    const options = { ...defaultEngineOptions, ...testEngineOptions }
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-rec", linearRecipe(["Work"], [push("work", "Work", { TimeoutSeconds: 30 })])))
      yield* putWorkMaster(SCOPE, { ID: "wm-plain", Description: "no recipe" })
      // "put" is a change word the engine ignores: as if the StoreAndStart entry had been trimmed.
      yield* putJobOrder(SCOPE, jobOrderFor("jo-rec", "wm-rec"), { state: JobStates.AllowedToStart_Ready, change: "put" })
      yield* putJobOrder(SCOPE, jobOrderFor("jo-plain", "wm-plain"), { state: JobStates.AllowedToStart_Ready, change: "put" })
      yield* putJobOrder(SCOPE, jobOrderFor("jo-stored", "wm-rec"), { state: JobStates.NotAllowedToStart_Ready, change: "Store" })
      expect(yield* executionOf("jo-rec")).toBeUndefined()

      expect(yield* reconcileOnce(options)).toEqual({ started: 1, reindexed: 0 })
      const started = yield* executionOf("jo-rec")
      expect(started?.state.status).toBe("running")
      expect(yield* executionOf("jo-plain")).toBeUndefined()
      expect(yield* executionOf("jo-stored")).toBeUndefined()
      // A second round finds nothing to do: the start is create-only.
      expect(yield* reconcileOnce(options)).toEqual({ started: 0, reindexed: 0 })

      // A lost due entry would leave the job without its timeout: reconcile puts it back.
      const deadline = started!.state.actions[0]!.deadline!
      expect(yield* dueScore(SCOPE, "jo-rec")).toBe(deadline)
      const valkey = yield* Valkey
      const dueKey = yield* valkey.key("sfcDue", { scope: SCOPE })
      yield* unsafeCommand(valkey, "zrem", (c) => c.zrem(dueKey, "jo-rec"))
      expect(yield* reconcileOnce(options)).toEqual({ started: 0, reindexed: 1 })
      expect(yield* dueScore(SCOPE, "jo-rec")).toBe(deadline)

      // The engine comes up and carries out the start's outbox entries.
      yield* Effect.forkScoped(Layer.launch(SfcEngineProcesses(testEngineOptions)))
      expect(responseSummary(yield* untilResponse("jo-rec"))).toMatchObject({ state: "Ended_Completed", data: { work: { ran: "work" } } })
      expect(yield* jobOrderState("jo-plain")).toBe("AllowedToStart_Ready")
      expect(yield* jobOrderState("jo-stored")).toBe("NotAllowedToStart_Ready")
    }).pipe(Effect.scoped, Effect.provide(world.layer))
  })
})
