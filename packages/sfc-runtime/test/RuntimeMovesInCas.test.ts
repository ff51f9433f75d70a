import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { IndexMaintenance, JobOrderDao, JobOrderSearch, JobResponseDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { decodeJobOrderRecord, JobStates, toStoredState } from "@microdcs/job-state"
import { correlationIdOf, type Recipe, validateRecipe } from "@microdcs/sfc"
import { Executions, JobOrderTransitions } from "@microdcs/sfc-runtime"
import { putJobOrder } from "./RuntimeFixtures.js"
import { changeEntries, jobOrderFor, linearRecipe, observer, push, SCOPE } from "./RuntimeKit.js"

/**
 * A write whose outbox moves the job order (Run with the start) carries the move in the same
 * script call, from the job order this process holds. The observer has no direct send and no
 * pollers, so nothing else could move the job order here.
 */

const recipe: Recipe = Result.getOrThrow(validateRecipe(linearRecipe(["Fit"], [push("fit", "Fit")])))

const mainOf = (id: string) =>
  Effect.flatMap(JobOrderDao, (dao) => dao.get(id)).pipe(Effect.map((doc) => Result.getOrThrow(decodeJobOrderRecord(doc.doc)).state.main))

/** A job order stored by the MES and read by this process (so its move can ride in the job's writes), with one requirement of each kind. */
const heldJobOrder = (id: string) =>
  Effect.andThen(
    putJobOrder(SCOPE, { ...jobOrderFor(id, "wm-move"), EquipmentRequirements: [{ ID: "station-7", EquipmentUse: "Fitting" }], MaterialRequirements: [{ MaterialLotID: "lot-9", Quantity: "2" }] }),
    Effect.flatMap(JobOrderTransitions, (transitions) => transitions.load(id))
  )

/** The job's execution created through the engine's loop. */
const start = (jobId: string) => Effect.flatMap(Executions, (executions) => executions.create({ jobId, scope: SCOPE, workMasterId: "wm-move", recipe }))

describe("SFC runtime: job order moves in the execution's write", () => {
  it.live("a start whose job order this process holds moves it to Running in the start's own write, once", () => {
    const prefix = randomPrefix("sfc-moves")
    return Effect.gen(function* () {
      yield* heldJobOrder("jo-move-1")
      expect((yield* start("jo-move-1"))._tag).toBe("Written")
      expect(yield* mainOf("jo-move-1")).toBe("Running")
      const runs = (yield* changeEntries(SCOPE)).filter((e) => e.id === "jo-move-1" && e.change === "Run")
      expect(runs.map((e) => e.op)).toEqual(["sfc:jo-move-1:1:Run"])
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })

  it.live("the last write moves the job order to Ended and stores the job response in its own write", () => {
    const prefix = randomPrefix("sfc-moves-end")
    return Effect.gen(function* () {
      const executions = yield* Executions
      yield* heldJobOrder("jo-move-3")
      yield* start("jo-move-3")
      const done = { type: "event", correlationId: correlationIdOf("jo-move-3", "fit", 1), data: { done: true } } as const
      expect(yield* executions.apply("jo-move-3", done)).toMatchObject({ _tag: "Written", version: 2 })
      expect(yield* mainOf("jo-move-3")).toBe("Ended")
      const responses = yield* JobResponseDao
      const response = yield* responses.byOrder("jo-move-3")
      expect(response.state).toBe("Ended_Completed")
      // The response's actuals are the held job order's requirements.
      expect(JSON.parse(response.doc)).toMatchObject({
        JobResponseID: "jo-move-3-response",
        JobState: toStoredState(JobStates.Ended_Completed),
        JobResponseData: [{ ID: "fit", Value: { done: true } }],
        PersonnelActuals: [],
        EquipmentActuals: [{ ID: "station-7", EquipmentUse: "Fitting" }],
        MaterialActuals: [{ MaterialLotID: "lot-9", Quantity: "2" }]
      })
      const changes = (yield* changeEntries(SCOPE)).filter((e) => e.id === "jo-move-3" || e.kind === "jobresponse")
      expect(changes.map((e) => [e.kind, e.change, e.op])).toEqual([
        ["joborder", "StoreAndStart", expect.anything()],
        ["joborder", "Run", "sfc:jo-move-3:1:Run"],
        ["joborder", "Complete", "sfc:jo-move-3:2:Complete"],
        ["jobresponse", "ResultUpdate", expect.stringMatching(/^sfc:/)]
      ])
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })

  it.live("the engine's moves in its own write keep the search index: Running, then Ended_Completed with its end time", () => {
    const prefix = randomPrefix("sfc-moves-search")
    const find = (states: ReadonlyArray<string>) =>
      Effect.flatMap(JobOrderSearch, (s) => s.search({ scopes: [SCOPE], states, workMaster: "wm-move" })).pipe(
        Effect.map((page) => page.items.filter((i) => i.id === "jo-move-4")),
        Effect.provide(JobOrderSearch.Default)
      )
    return Effect.gen(function* () {
      const executions = yield* Executions
      yield* heldJobOrder("jo-move-4")
      expect(yield* find(["AllowedToStart_Ready", "AllowedToStart_Waiting"])).toHaveLength(1)
      yield* start("jo-move-4")
      expect(yield* find(["Running"])).toMatchObject([{ id: "jo-move-4", state: "Running", workMaster: "wm-move", endedMs: null }])
      expect(yield* find(["AllowedToStart_Ready", "AllowedToStart_Waiting"])).toEqual([])
      const done = { type: "event", correlationId: correlationIdOf("jo-move-4", "fit", 1), data: { done: true } } as const
      yield* executions.apply("jo-move-4", done)
      const ended = yield* find(["Ended_Completed"])
      expect(ended).toMatchObject([{ id: "jo-move-4", state: "Ended_Completed" }])
      expect(ended[0]!.endedMs).toBeGreaterThanOrEqual(ended[0]!.createdMs!)
      expect(yield* find(["Running"])).toEqual([])
      // The index holds exactly what the documents imply.
      const check = yield* Effect.flatMap(IndexMaintenance, (m) => m.check({ scope: SCOPE })).pipe(Effect.provide(IndexMaintenance.Default))
      expect(check.filter((i) => i.key.includes("joborder:search"))).toEqual([])
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })

  it.live("a job order the MES moved since this process read it is left alone: the entry's handler judges it", () => {
    const prefix = randomPrefix("sfc-moves-stale")
    return Effect.gen(function* () {
      const transitions = yield* JobOrderTransitions
      yield* heldJobOrder("jo-move-2")
      // The MES writes meanwhile (a new version): the cached version no longer matches.
      yield* putJobOrder(SCOPE, jobOrderFor("jo-move-2", "wm-move"), { expectedVersion: 1, change: "Update" })
      expect((yield* start("jo-move-2"))._tag).toBe("Written")
      expect(yield* mainOf("jo-move-2")).toBe("AllowedToStart")
      // The next move starts from a fresh read: the stale copy was dropped.
      expect(yield* transitions.apply("jo-move-2", "Run")).toMatchObject({ _tag: "Applied", to: expect.stringContaining("Running") })
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })
})
