import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { JobStates } from "@microdcs/job-state"
import type { PollerEntry } from "@microdcs/poller"
import { JobOrderDao } from "@microdcs/store"
import { type EngineOptions, defaultEngineOptions, Executions, JobOrderTransitions, RecipeSnapshots, startJob } from "@microdcs/sfc-runtime"
import { type Recipe, validateRecipe } from "@microdcs/sfc"
// The change-batch handler is internal to the runtime; the test plays the poller delivering a batch.
import { handleChangeBatch } from "../src/WorkBatches.js"
import { jobOrderSeen } from "../src/WriteCarriedAlong.js"
import type { PlannedMove } from "../src/JobOrderTransitions.js"
import { engineWorld, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { changeEntries, countChanges, executionOf, jobOrderFor, push, recipeWorkMasterV11, responseSummary, SCOPE, stepJson, transition, untilResponse } from "./RuntimeKit.js"

/**
 * An MES Update of the job order that lands after the engine's start read the job order and
 * before it created the execution: the Update's own follower finds no execution, so the start
 * must bring the Update's fields itself. The test seam `afterStartReadForTest` lands the Update
 * (and, in the first case, hands its change entry to the engine) exactly in that window.
 */

const recipe = {
  Steps: [stepJson("Check", true), stepJson("Go")],
  Transitions: [transition("Check", "Go", "order.Priority > 3 && Check.T < 1h")],
  Actions: [push("check", "Check"), push("go", "Go")]
}

const changeEntry = (jobId: string, change: string, n: number): PollerEntry => ({
  kind: "changes", scope: SCOPE, stream: "changes", id: `1-${n}`, fields: { kind: "joborder", id: jobId, change }, deliveries: 1
})

/** The MES's Update as job control writes it: the job order with Priority 5, still AllowedToStart. */
const mesUpdate = (jobId: string) =>
  Effect.gen(function* () {
    const stored = yield* (yield* JobOrderDao).get(jobId)
    yield* putJobOrder(SCOPE, { ...jobOrderFor(jobId, "wm-race"), Priority: 5 }, { expectedVersion: stored.version, change: "Update", state: JobStates.AllowedToStart_Ready })
  })

// Only the services: no poller takes the entries before the test hands them over.
const world = () => engineWorld({}, { roles: { engine: false, sweep: false } })

/** Engine options whose seam runs `between` once, for `jobId`, between the start's read and its create. */
const withSeam = <R>(jobId: string, between: Effect.Effect<void, unknown, R>) =>
  Effect.map(Effect.context<R>(), (context): EngineOptions => {
    let ran = false
    return {
      ...defaultEngineOptions,
      afterStartReadForTest: (jobIds) => {
        if (ran || !jobIds.includes(jobId)) return Effect.void
        ran = true
        return between.pipe(Effect.provideContext(context), Effect.orDie)
      }
    }
  })

describe("SFC runtime: an MES change between a start's read and its create", () => {
  it.live("its follower ran before the create and found no execution: the start feeds the updated order", () =>
    Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-race", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-race-1", "wm-race"))
      const update = Effect.gen(function* () {
        yield* mesUpdate("jo-race-1")
        // The Update's change entry is followed now, before the create: no execution yet.
        expect((yield* handleChangeBatch(defaultEngineOptions)([changeEntry("jo-race-1", "Update", 2)])).failures).toEqual([])
        expect(yield* executionOf("jo-race-1")).toBeUndefined()
      })
      const options = yield* withSeam("jo-race-1", update)
      expect((yield* handleChangeBatch(options)([changeEntry("jo-race-1", "StoreAndStart", 1)])).failures).toEqual([])
      expect((yield* executionOf("jo-race-1"))?.state.order).toEqual({ Priority: 5 })
    }).pipe(Effect.provide(world().layer))
  )

  it.live("a single start (its Run move meets the updated order and does not land) feeds the updated order", () =>
    Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-race", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-race-2", "wm-race"))
      const options = yield* withSeam("jo-race-2", mesUpdate("jo-race-2"))
      expect(yield* startJob("jo-race-2", options)).toBe("started")
      expect((yield* executionOf("jo-race-2"))?.state.order).toEqual({ Priority: 5 })
      // The Update's own follower, after the create, changes nothing more.
      expect((yield* handleChangeBatch(defaultEngineOptions)([changeEntry("jo-race-2", "Update", 3)])).failures).toEqual([])
      expect((yield* executionOf("jo-race-2"))?.state.order).toEqual({ Priority: 5 })
    }).pipe(Effect.provide(world().layer))
  )

  it.live("an Abort in that window (its follower found no execution): the start aborts the execution it created", () =>
    Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-race", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-race-5", "wm-race"))
      const abort = Effect.gen(function* () {
        expect((yield* (yield* JobOrderTransitions).apply("jo-race-5", "Abort"))._tag).toBe("Applied")
        expect((yield* handleChangeBatch(defaultEngineOptions)([changeEntry("jo-race-5", "Abort", 2)])).failures).toEqual([])
      })
      const options = yield* withSeam("jo-race-5", abort)
      expect(yield* startJob("jo-race-5", options)).toBe("started")
      expect((yield* executionOf("jo-race-5"))?.state.status).toBe("aborted")
    }).pipe(Effect.provide(world().layer))
  )

  it.live("a Cancel in that window (the job order is gone): the start removes the execution it created", () =>
    Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-race", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-race-6", "wm-race"))
      const cancel = Effect.gen(function* () {
        expect((yield* (yield* JobOrderTransitions).apply("jo-race-6", "Cancel"))._tag).toBe("Applied")
        expect((yield* handleChangeBatch(defaultEngineOptions)([changeEntry("jo-race-6", "Cancel", 2)])).failures).toEqual([])
      })
      const options = yield* withSeam("jo-race-6", cancel)
      yield* startJob("jo-race-6", options)
      expect(yield* executionOf("jo-race-6")).toBeUndefined()
    }).pipe(Effect.provide(world().layer))
  )

  // End to end: the poller runs the Update's follower after the start's batch here, so this one
  // passed before too; it checks the start's feed beside the direct send's read and the Run.
  it.live("the whole engine with direct send runs the job on the updated order", () => {
    // The engine's layer is built before the test runs: its seam runs what the test puts here.
    const seam: { between?: Effect.Effect<void> | undefined } = {}
    const once = (jobIds: ReadonlyArray<string>) => {
      const between = jobIds.includes("jo-race-4") ? seam.between : undefined
      if (between !== undefined) seam.between = undefined
      return between ?? Effect.void
    }
    const engine = engineWorld({}, { engine: { afterStartReadForTest: once } })
    return Effect.gen(function* () {
      const options = yield* withSeam("jo-race-4", mesUpdate("jo-race-4"))
      seam.between = options.afterStartReadForTest!(["jo-race-4"])
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-race", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-race-4", "wm-race"))
      expect(responseSummary(yield* untilResponse("jo-race-4"))).toMatchObject({ state: "Ended_Completed", data: { go: {} } })
      expect(engine.station.commands.map((c) => c.action)).toEqual(["check", "go"])
      expect(seam.between).toBeUndefined()
      expect(countChanges(yield* changeEntries(SCOPE), "jo-race-4", "Update")).toBe(1)
    }).pipe(Effect.provide(engine.layer))
  })

  it.live("without an Update the create's answer names the version the start read: nothing more is read", () =>
    Effect.gen(function* () {
      yield* putJobOrder(SCOPE, jobOrderFor("jo-race-3", "wm-race"))
      const read = (yield* (yield* JobOrderTransitions).load("jo-race-3"))!
      const checked = Result.getOrThrow(validateRecipe(recipe, "1.1.0")) as Recipe
      const { digest } = yield* (yield* RecipeSnapshots).snapshot(checked)
      const params = { jobId: "jo-race-3", scope: SCOPE, workMasterId: "wm-race", recipe: checked, recipeDigest: digest, order: read.jobOrder }
      const created = yield* (yield* Executions).create(params)
      expect(created).toMatchObject({ _tag: "Written", jobOrderSeen: read.version })
    }).pipe(Effect.provide(world().layer))
  )
})

describe("jobOrderSeen: the job order version a create's script found, from its reply", () => {
  const move = { current: { version: 4 } } as PlannedMove
  const written = { version: 1, op: "op", entryIds: [] }
  it("the version the move was checked against when it landed; else the send gate's read; else not known", () => {
    expect(jobOrderSeen({ move, response: undefined }, { ...written, jobOrderVersion: 5, jobOrder: { version: 5, doc: undefined } })).toBe(4)
    expect(jobOrderSeen({ move, response: undefined }, { ...written, jobOrderVersion: 0, jobOrder: { version: 6, doc: "{}" } })).toBe(6)
    expect(jobOrderSeen({ move, response: undefined }, { ...written, jobOrderVersion: 0 })).toBeUndefined()
    expect(jobOrderSeen({ move: undefined, response: undefined }, { ...written, jobOrder: { version: 3, doc: undefined } })).toBe(3)
    expect(jobOrderSeen({ move: undefined, response: undefined }, { ...written, jobOrder: null })).toBe(0)
    expect(jobOrderSeen({ move: undefined, response: undefined }, written)).toBeUndefined()
  })
})
