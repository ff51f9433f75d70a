import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SfcStateDao } from "@microdcs/store"
import { engineWorld, eventually, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import {
  executionOf,
  jobOrderFor,
  linearRecipe,
  pull,
  push,
  recipeWorkMaster,
  SCOPE,
  stepJson,
  transition,
  untilJobOrderIs,
  responseSummary,
  untilResponse
} from "./RuntimeKit.js"

/** Recipes of every shape, run end to end through the runtime against the real server. */

const actionsSent = (log: { readonly commands: ReadonlyArray<{ readonly jobId: string; readonly action: string }> }, jobId: string) =>
  log.commands.filter((c) => c.jobId === jobId).map((c) => c.action)

describe("SFC runtime: recipes end to end", () => {
  it.live("a linear recipe: commands in step order, a pull event, the results in the job response", () => {
    const world = engineWorld({
      onCommand: (command) => ({ data: { done: command.action, ...command.parameters } }),
      events: { "com.example.unload.v1": () => ({ unloaded: true }) }
    })
    const recipe = linearRecipe(["Load", "Process", "Unload"], [
      push("load", "Load"),
      push("process", "Process", { Parameters: { speed: 3 } }),
      pull("unload", "Unload")
    ])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-linear", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-linear", "wm-linear"))
      const linear = yield* untilResponse("jo-linear")
      expect(linear).toMatchObject({ JobResponseID: "jo-linear-response", JobOrderID: "jo-linear" })
      expect(responseSummary(linear)).toEqual({
        state: "Ended_Completed",
        data: { load: { done: "load" }, process: { done: "process", speed: 3 }, unload: { unloaded: true } },
        error: undefined
      })
      yield* untilJobOrderIs("jo-linear", "Ended_Completed")
      expect(actionsSent(world.station, "jo-linear")).toEqual(["load", "process"])
      expect(world.station.commands[1]).toMatchObject({ typeId: "com.example.process.v1", subject: SCOPE, parameters: { speed: 3 }, attempt: 1 })
      const execution = yield* executionOf("jo-linear")
      expect(execution?.state.status).toBe("completed")
      expect(execution?.state.history.map((h) => h.step)).toEqual(["Load", "Process", "Unload"])
      const states = yield* SfcStateDao
      expect(yield* states.listActive(SCOPE)).toEqual([])
      expect(yield* states.waiting(SCOPE, "com.example.unload.v1")).toEqual([])
    }).pipe(Effect.provide(world.layer))
  })

  it.live("a selection branch takes the path whose condition holds, per job", () => {
    const grades: Record<string, string> = { "jo-grade-a": "A", "jo-grade-b": "B" }
    const world = engineWorld({ onCommand: (command) => ({ data: command.action === "inspect" ? { grade: grades[command.jobId] } : { ok: true } }) })
    const recipe = {
      Steps: ["Inspect", "Polish", "Pack", "Rework", "Done"].map((name, i) => stepJson(name, i === 0)),
      Branches: [{ Name: "Route", Type: "selection", Branches: [["Polish", "Pack"], ["Rework"]] }],
      Transitions: [
        transition("Inspect", "Route"),
        transition("Route", "Polish", 'grade == "A"'),
        transition("Route", "Rework", 'grade == "B"'),
        transition("Route", "Done")
      ],
      Actions: [push("inspect", "Inspect"), push("polish", "Polish"), push("pack", "Pack"), push("rework", "Rework")]
    }
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-select", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-grade-a", "wm-select"))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-grade-b", "wm-select"))
      const [a, b] = (yield* Effect.all([untilResponse("jo-grade-a"), untilResponse("jo-grade-b")], { concurrency: 2 })).map(responseSummary)
      expect(a).toMatchObject({ state: "Ended_Completed", data: { inspect: { grade: "A" }, polish: { ok: true }, pack: { ok: true } } })
      expect(b).toMatchObject({ state: "Ended_Completed", data: { inspect: { grade: "B" }, rework: { ok: true } } })
      expect(Object.keys(b!.data)).not.toContain("polish")
      expect(actionsSent(world.station, "jo-grade-a")).toEqual(["inspect", "polish", "pack"])
      expect(actionsSent(world.station, "jo-grade-b")).toEqual(["inspect", "rework"])
      expect((yield* executionOf("jo-grade-b"))?.state.history.map((h) => h.step)).toEqual(["Inspect", "Rework", "Done"])
    }).pipe(Effect.provide(world.layer))
  })

  it.live("a simultaneous branch runs every path and converges before the next step", () => {
    const world = engineWorld({
      onCommand: (command) => ({ data: { done: command.action } }),
      events: { "com.example.qa.v1": () => ({ passed: true }) }
    })
    const recipe = {
      Steps: ["Prepare", "Fit", "Tighten", "Qa", "Verify"].map((name, i) => stepJson(name, i === 0)),
      Branches: [{ Name: "Work", Type: "simultaneous", Branches: [["Fit", "Tighten"], ["Qa"]] }],
      Transitions: [transition("Prepare", "Work"), transition("Work", "Verify")],
      Actions: [push("prepare", "Prepare"), push("fit", "Fit"), push("tighten", "Tighten"), pull("qa", "Qa"), push("verify", "Verify")]
    }
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-parallel", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-parallel", "wm-parallel"))
      const response = responseSummary(yield* untilResponse("jo-parallel"))
      expect(response).toMatchObject({
        state: "Ended_Completed",
        data: { prepare: { done: "prepare" }, fit: { done: "fit" }, tighten: { done: "tighten" }, qa: { passed: true }, verify: { done: "verify" } }
      })
      const sent = actionsSent(world.station, "jo-parallel")
      expect(sent[0]).toBe("prepare")
      expect(sent.indexOf("fit")).toBeLessThan(sent.indexOf("tighten"))
      // Verify waits for both paths: the last command, after the path's last step and the QA event.
      expect(sent[sent.length - 1]).toBe("verify")
      expect(world.station.events).toEqual([{ jobId: "jo-parallel", type: "com.example.qa.v1" }])
      const execution = yield* executionOf("jo-parallel")
      expect(execution?.state.branches).toEqual([])
      expect(new Set(execution?.state.history.map((h) => h.step))).toEqual(new Set(["Prepare", "Fit", "Tighten", "Qa", "Verify"]))
      yield* untilJobOrderIs("jo-parallel", "Ended_Completed")
    }).pipe(Effect.provide(world.layer))
  })

  it.live("no outgoing condition holds: the job order ends Aborted, the response names the step", () => {
    const world = engineWorld({ onCommand: () => ({ data: { value: 5 } }) })
    const recipe = {
      Steps: [stepJson("Measure", true), stepJson("Accept")],
      Transitions: [transition("Measure", "Accept", "value > 10")],
      Actions: [push("measure", "Measure"), push("accept", "Accept")]
    }
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-fail", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-fail", "wm-fail"))
      const response = responseSummary(yield* untilResponse("jo-fail"))
      expect(response).toMatchObject({ state: "Aborted", data: { measure: { value: 5 } } })
      expect(response.error).toEqual(expect.stringContaining("Measure"))
      yield* untilJobOrderIs("jo-fail", "Aborted")
      expect(actionsSent(world.station, "jo-fail")).toEqual(["measure"])
      const execution = yield* executionOf("jo-fail")
      expect(execution?.state.status).toBe("failed")
      expect(execution?.state.error).toContain("Measure")
    }).pipe(Effect.provide(world.layer))
  })

  it.live("pulse actions are dispatched and the step does not wait for them, even in the last step", () => {
    // The station never answers a pulse: the job must complete anyway.
    const world = engineWorld({ onCommand: (command) => (command.action === "work" ? { data: { worked: true } } : "silent") })
    const recipe = linearRecipe(["Signal", "Work", "Bye"], [
      push("beep", "Signal", { Qualifier: "P", Parameters: { tone: 440 } }),
      push("work", "Work"),
      push("bye", "Bye", { Qualifier: "P" })
    ])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-pulse", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-pulse", "wm-pulse"))
      const response = responseSummary(yield* untilResponse("jo-pulse"))
      expect(response).toMatchObject({ state: "Ended_Completed", data: { work: { worked: true } } })
      expect(Object.keys(response.data)).toEqual(["work"])
      // The last pulse goes out although the job completed in the same write that dispatched it.
      const sent = yield* eventually(Effect.sync(() => (world.station.commands.length >= 3 ? actionsSent(world.station, "jo-pulse") : undefined)))
      expect(sent).toEqual(["beep", "work", "bye"])
      expect(world.station.commands[0]).toMatchObject({ action: "beep", parameters: { tone: 440 }, attempt: 1 })
      yield* untilJobOrderIs("jo-pulse", "Ended_Completed")
    }).pipe(Effect.provide(world.layer))
  })
})
