import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { JobStates } from "@microdcs/job-state"
import { JobOrderDao } from "@microdcs/store"
import { counterWorld, setCounter } from "./CounterKit.js"
import { engineWorld, eventually, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import {
  dueScore,
  executionOf,
  jobOrderFor,
  push,
  recipeWorkMasterV11,
  responseSummary,
  SCOPE,
  stepJson,
  transition,
  untilExecution,
  untilResponse
} from "./RuntimeKit.js"

/**
 * Recipe schema v1.1.0 through the runtime, against the real server: a step that waits for its
 * own time and one that waits for a counter (read again on the timer sweep), a counter source
 * that is down, a step's time limit that takes the way out it names, the job's time limit, and a
 * job order update that moves a waiting step on.
 */

/** Press for at least 300 ms, then Cure until more than two good parts are counted, then Pack. */
const waitingRecipe = {
  Steps: [stepJson("Press", true), stepJson("Cure"), stepJson("Pack")],
  Transitions: [transition("Press", "Cure", "Press.T >= 300ms"), transition("Cure", "Pack", "counter.good_parts > 2")],
  Actions: [push("press", "Press"), push("cure", "Cure"), push("pack", "Pack")]
}

const sent = (log: { readonly commands: ReadonlyArray<{ readonly jobId: string; readonly action: string }> }, jobId: string) =>
  log.commands.filter((c) => c.jobId === jobId).map((c) => c.action)

describe("SFC runtime: recipe schema v1.1.0", () => {
  it.live("a step waits for its own time, the next for a counter read again on the sweep, and the job completes", () => {
    const { layer, world, station } = counterWorld({ onCommand: (c) => ({ data: c.action === "cure" ? { tool: "nr-1" } : {} }) }, { counterRecheckMs: 100 })
    return Effect.gen(function* () {
      yield* setCounter("good_parts", "nr-1", 0)
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-wait", waitingRecipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-wait", "wm-wait"))

      // Cure is done and waits: the due index holds its next counter read.
      const waiting = yield* untilExecution("jo-wait", (s) => s.active[0]?.step === "Cure" && s.active[0].checkedAt !== undefined)
      expect(waiting.state.stepTimes?.["Press"]).toBeGreaterThanOrEqual(300)
      expect(waiting.state.counterRecheckMs).toBe(100)
      // The state and its due score are written together (read both until they are of one write).
      yield* eventually(
        Effect.gen(function* () {
          const due = yield* dueScore(SCOPE, "jo-wait")
          const checkedAt = (yield* executionOf("jo-wait"))?.state.active[0]?.checkedAt
          return checkedAt !== undefined && due === checkedAt + 100 ? true : undefined
        })
      )
      // It reads the counter again and again while it stays at 0.
      yield* eventually(Effect.sync(() => (world.requests.length >= 3 ? true : undefined)))
      expect(sent(station, "jo-wait")).toEqual(["press", "cure"])

      yield* setCounter("good_parts", "nr-1", 3)
      expect(responseSummary(yield* untilResponse("jo-wait"))).toMatchObject({ state: "Ended_Completed", data: { press: {}, cure: { tool: "nr-1" }, pack: {} } })
      expect(sent(station, "jo-wait")).toEqual(["press", "cure", "pack"])
      expect(world.requests.every((r) => r.source === "Cure" && r.counters.join() === "good_parts")).toBe(true)
      expect(yield* dueScore(SCOPE, "jo-wait")).toBeNull()
    }).pipe(Effect.provide(layer))
  })

  it.live("a counter source that is down holds back only the step that reads it; the sweep ticks every other scope", () => {
    const { layer, world } = counterWorld({ onCommand: (c) => ({ data: c.action === "cure" ? { tool: "nr-2" } : {} }) }, { counterRecheckMs: 100 })
    const timed = { ...waitingRecipe, Transitions: [transition("Press", "Cure", "Press.T >= 300ms"), transition("Cure", "Pack", "Cure.T >= 200ms")] }
    return Effect.gen(function* () {
      yield* setCounter("good_parts", "nr-2", 0)
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-counted", waitingRecipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-counted", "wm-counted"))
      yield* untilExecution("jo-counted", (s) => s.active[0]?.step === "Cure" && s.active[0].checkedAt !== undefined)
      yield* Ref.set(world.failing, true)
      // A job of another scope, waiting on its steps' times only, runs to its end meanwhile.
      yield* putWorkMaster("line-2", recipeWorkMasterV11("wm-timed", timed))
      yield* putJobOrder("line-2", jobOrderFor("jo-timed", "wm-timed"))
      expect(responseSummary(yield* untilResponse("jo-timed"))).toMatchObject({ state: "Ended_Completed" })
      expect((yield* executionOf("jo-counted"))?.state.active.map((a) => a.step)).toEqual(["Cure"])
      // The source is back: the counted job reads its counter again and goes on.
      yield* setCounter("good_parts", "nr-2", 5)
      yield* Ref.set(world.failing, false)
      expect(responseSummary(yield* untilResponse("jo-counted"))).toMatchObject({ state: "Ended_Completed" })
    }).pipe(Effect.provide(layer))
  })

  it.live("a step past its MaxDuration takes the way out it names; its silent command is not sent again", () => {
    const recipe = {
      Steps: [{ ...stepJson("Press", true), MaxDuration: "300ms", OnMaxDuration: "Recover" }, stepJson("Done"), stepJson("Recover")],
      Transitions: [transition("Press", "Done")],
      Actions: [push("press", "Press", { TimeoutSeconds: 60 }), push("done", "Done"), push("recover", "Recover")]
    }
    const world = engineWorld({ onCommand: (c) => (c.action === "press" ? "silent" : { data: { ok: true } }) })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-limit", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-limit", "wm-limit"))
      const response = responseSummary(yield* untilResponse("jo-limit"))
      expect(response).toMatchObject({ state: "Ended_Completed", data: { recover: { ok: true } } })
      expect(sent(world.station, "jo-limit")).toEqual(["press", "recover"])
      const execution = yield* executionOf("jo-limit")
      expect(execution?.state.history.map((h) => h.step)).toEqual(["Press", "Recover"])
      const press = execution!.state.history[0]!
      expect(press.leftAt! - press.enteredAt).toBeGreaterThanOrEqual(300)
    }).pipe(Effect.provide(world.layer))
  })

  it.live("the job's MaxJobDuration fails the job", () => {
    const recipe = { ...waitingRecipe, MaxJobDuration: "400ms" }
    const world = engineWorld({ onCommand: (c) => (c.action === "press" ? "silent" : {}) })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-joblimit", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-joblimit", "wm-joblimit"))
      const response = responseSummary(yield* untilResponse("jo-joblimit"))
      expect(response).toMatchObject({ state: "Aborted", error: "the job ran longer than its MaxJobDuration (400ms)" })
    }).pipe(Effect.provide(world.layer))
  })

  it.live("an Update of the job order reaches the waiting step, whose transition reads the order's field", () => {
    const recipe = {
      Steps: [stepJson("Check", true), stepJson("Go")],
      Transitions: [transition("Check", "Go", "order.Priority > 3 && Check.T < 1h")],
      Actions: [push("check", "Check"), push("go", "Go")]
    }
    const world = engineWorld({})
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-order", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-order", "wm-order"))
      const waiting = yield* untilExecution("jo-order", (s) => s.active[0]?.checkedAt !== undefined)
      expect(waiting.state.order).toEqual({ Priority: 1 })
      // The update is written as job control writes one (state machines aside: the change word is what the engine follows).
      const stored = yield* (yield* JobOrderDao).get("jo-order")
      yield* putJobOrder(SCOPE, { ...jobOrderFor("jo-order", "wm-order"), Priority: 5 }, { expectedVersion: stored.version, change: "Update", state: JobStates.Running })
      expect(responseSummary(yield* untilResponse("jo-order"))).toMatchObject({ state: "Ended_Completed", data: { go: {} } })
      expect((yield* executionOf("jo-order"))?.state.order).toEqual({ Priority: 5 })
    }).pipe(Effect.provide(world.layer))
  })
})
