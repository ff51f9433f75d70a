import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { fixture } from "@microdcs/test-utils"
import { correlationIdOf, validateWorkMasterRecipe } from "@microdcs/sfc"
import { entriesOf, Job, JOB, pull, push, recipeOf, stepJson, T0, transition } from "./EngineKit.js"

// Branches, loops, the axle fixture end to end, and recipes that would cycle without waiting.

const branchRecipe = (type: "simultaneous" | "selection", extraTransitions: ReadonlyArray<object> = []) =>
  recipeOf({
    Steps: ["Init", "A1", "A2", "B1", "C1", "After"].map((n, i) => stepJson(n, i === 0)),
    Branches: [{ Name: "Fork", Type: type, Branches: [["A1", "A2"], ["B1"], ["C1"]] }],
    Transitions: [transition("Init", "Fork"), ...extraTransitions, transition("Fork", "After", "b1done || a2done || c1done")],
    Actions: [
      push("a1", "A1"), push("a2", "A2"), pull("b1", "B1"), push("c1", "C1"), push("after", "After"),
      push("init", "Init")
    ]
  })

describe("simultaneous branch", () => {
  it("starts every path, runs each path in order, and converges when the last path finishes", () => {
    const job = new Job(branchRecipe("simultaneous"))
    job.answer("init", T0 + 1, { route: "b" })
    expect(job.activeSteps()).toEqual(["A1", "B1", "C1"])
    expect(job.state.active.map((a) => a.branch)).toEqual([{ name: "Fork", path: 0 }, { name: "Fork", path: 1 }, { name: "Fork", path: 2 }])
    expect(job.state.branches).toEqual([{ name: "Fork", enteredAt: T0 + 1, runningPaths: [0, 1, 2] }])
    expect(entriesOf(job.last, "command").map((c) => c.action)).toEqual(["a1", "c1"])
    expect(job.last.waitsAdd.map((w) => w.typeId)).toEqual(["com.example.b1"])

    job.answer("c1", T0 + 2, { c1done: true })
    expect(job.state.branches[0]!.runningPaths).toEqual([0, 1])
    job.answer("a1", T0 + 3)
    expect(job.activeSteps()).toEqual(["B1", "A2"])
    job.answer("b1", T0 + 4, { b1done: true })
    expect(job.activeSteps()).toEqual(["A2"])
    expect(job.state.branches[0]!.runningPaths).toEqual([0])

    // The last path ends: the branch converges and leaves by its own transition, in the same write.
    const out = job.answer("a2", T0 + 5, { a2done: false })
    expect(job.activeSteps()).toEqual(["After"])
    expect(job.state.branches).toEqual([])
    expect(entriesOf(out, "command").map((c) => c.action)).toEqual(["after"])
  })

  it("fails naming the branch when none of its own transitions holds", () => {
    const job = new Job(branchRecipe("simultaneous"))
    job.answer("init", T0 + 1)
    for (const action of ["a1", "c1", "b1", "a2"]) job.answer(action, T0 + 2, { nothing: true })
    expect(job.state.status).toBe("failed")
    expect(job.state.error).toBe("no transition out of Fork has a condition that holds")
  })
})

describe("selection branch", () => {
  const chooser = [
    transition("Fork", "A1", "route == 'a'", 1),
    transition("Fork", "B1", "route == 'b' || route == 'any'", 2),
    transition("Fork", "C1", "route == 'c' || route == 'any'", 0)
  ]

  it("runs the one path whose transition holds, lowest priority first, and exits when it finishes", () => {
    const job = new Job(branchRecipe("selection", chooser))
    job.answer("init", T0 + 1, { route: "b" })
    expect(job.activeSteps()).toEqual(["B1"])
    expect(job.state.branches).toEqual([{ name: "Fork", enteredAt: T0 + 1, runningPaths: [1] }])
    job.answer("b1", T0 + 2, { b1done: true })
    expect(job.activeSteps()).toEqual(["After"])

    const any = new Job(branchRecipe("selection", chooser))
    any.answer("init", T0 + 1, { route: "any" })
    expect(any.activeSteps()).toEqual(["C1"])
  })

  it("runs the first path when no transition leads from the branch into a path", () => {
    const job = new Job(branchRecipe("selection"))
    job.answer("init", T0 + 1, { route: "c" })
    expect(job.activeSteps()).toEqual(["A1"])
    job.answer("a1", T0 + 2)
    job.answer("a2", T0 + 3, { a2done: true })
    expect(job.activeSteps()).toEqual(["After"])
  })

  it("fails naming the branch when transitions into its paths exist but none holds", () => {
    const job = new Job(branchRecipe("selection", chooser))
    job.answer("init", T0 + 1, { route: "z" })
    expect(job.state.status).toBe("failed")
    expect(job.state.error).toContain("selection branch Fork")
  })
})

describe("loops", () => {
  it("gives every entry a new visit and a new correlation id", () => {
    const recipe = recipeOf({
      Steps: [stepJson("Work", true), stepJson("Check"), stepJson("End")],
      Transitions: [transition("Work", "Check"), transition("Check", "End", "good"), transition("Check", "Work", "!good")],
      Actions: [push("work", "Work"), pull("check", "Check")]
    })
    const job = new Job(recipe)
    const ids = [job.open("work").correlationId]
    for (let round = 1; round <= 3; round++) {
      job.answer("work", T0 + round * 10)
      expect(job.open("check").visit).toBe(round)
      job.answer("check", T0 + round * 10 + 1, { good: round === 3 })
      if (round < 3) ids.push(job.open("work").correlationId)
    }
    expect(ids).toEqual([1, 2, 3].map((visit) => correlationIdOf(JOB, "work", visit)))
    expect(job.state.status).toBe("completed")
    expect(job.state.visits).toEqual({ Work: 3, Check: 3, End: 1 })
    expect(job.state.history.map((h) => `${h.step}#${h.visit}`)).toEqual(["Work#1", "Check#1", "Work#2", "Check#2", "Work#3", "Check#3", "End#1"])
  })

  it("fails a recipe that cycles through action-less steps instead of spinning, naming the step", () => {
    const recipe = recipeOf({
      Steps: [stepJson("Start", true), stepJson("Ping"), stepJson("Pong")],
      Transitions: [transition("Start", "Ping"), transition("Ping", "Pong"), transition("Pong", "Ping")],
      Actions: []
    })
    const job = new Job(recipe)
    expect(job.state.status).toBe("failed")
    expect(job.state.error).toBe("the recipe loops through step Ping without waiting for anything")
    expect(job.all("jobresponse")).toHaveLength(1)
    expect(job.last.active).toBe(false)
  })

  it("sends each pulse of a cycle once before failing it (regression: it used to send hundreds)", () => {
    const recipe = recipeOf({
      Steps: [stepJson("Wait", true), stepJson("Blink"), stepJson("Dark")],
      Transitions: [transition("Wait", "Blink"), transition("Blink", "Dark"), transition("Dark", "Blink")],
      Actions: [pull("go", "Wait"), push("blink", "Blink", { Qualifier: "P" }), pull("peek", "Dark", { Qualifier: "P" })]
    })
    const job = new Job(recipe)
    const out = job.answer("go", T0 + 1)
    expect(entriesOf(out, "command").map((c) => c.action)).toEqual(["blink"])
    expect(job.state.error).toBe("the recipe loops through step Blink without waiting for anything")
    expect(out.waitsRemove).toEqual(["com.example.go"])
    expect(out.waitsAdd).toEqual([])
  })

  it("fails a branch entered twice in one call, and enters none of its later paths", () => {
    const recipe = recipeOf({
      Steps: ["Init", "P1", "P2", "Back"].map((n, i) => stepJson(n, i === 0)),
      Branches: [{ Name: "Fork", Type: "simultaneous", Branches: [["P1"], ["P2"]] }],
      Transitions: [transition("Init", "Fork"), transition("Fork", "Back"), transition("Back", "Fork")],
      Actions: [push("p2", "P2", { Qualifier: "P" })]
    })
    const job = new Job(recipe)
    expect(job.state.error).toBe("the recipe loops through step P1 without waiting for anything")
    expect(job.all("command")).toHaveLength(1)
    expect(job.state.active).toEqual([])
  })
})

describe("axle work master", () => {
  const workMaster: unknown = fixture("work-master-axle.json")
  const recipe = Result.getOrThrow(validateWorkMasterRecipe(workMaster)!)

  it("runs the branch, one rework loop, and completes with every result", () => {
    const job = new Job(recipe)
    expect(job.activeSteps()).toEqual(["Positioning", "QaCheck"]) // Init has no actions
    expect(job.all("command").map((c) => [c.action, c.parameters])).toEqual([["position", { slot: 3 }]])
    expect(job.last.waitsAdd.map((w) => w.typeId)).toEqual(["com.example.station.qa.v1"])

    job.answer("position", T0 + 1_000, { at: 3 })
    expect(job.activeSteps()).toEqual(["QaCheck", "TightenBolts"])
    job.apply({ type: "event", eventType: "com.example.station.qa.v1", data: { visual: "ok" } }, T0 + 2_000)
    job.answer("tighten", T0 + 3_000, { torque: 70 })
    expect(job.activeSteps()).toEqual(["VerifyTorque"])
    expect(job.last.waitsAdd.map((w) => w.typeId)).toEqual(["com.example.station.torque.v1"])
    expect(job.last.waitsRemove).toEqual([])

    job.apply({ type: "event", eventType: "com.example.station.torque.v1", data: { torque_ok: false } }, T0 + 4_000)
    expect(job.activeSteps()).toEqual(["TightenBolts_Rework"])
    const rework = job.all("command").at(-1)!
    expect(rework).toMatchObject({ action: "retighten", typeId: "com.example.station.tighten.v1", parameters: { rework: true } })
    expect(rework.correlationId).toBe(correlationIdOf(JOB, "retighten", 1))

    job.answer("retighten", T0 + 5_000, { torque: 85 })
    expect(job.open("verify").visit).toBe(2)
    const end = job.apply({ type: "event", eventType: "com.example.station.torque.v1", data: { torque_ok: true } }, T0 + 6_000)
    expect(job.state.status).toBe("completed")
    expect(job.state.history.map((h) => h.step)).toEqual([
      "Init", "Positioning", "QaCheck", "TightenBolts", "VerifyTorque", "TightenBolts_Rework", "VerifyTorque", "Complete"
    ])
    expect(end.outbox).toEqual([
      { type: "joborder", jobId: JOB, trigger: "Complete" },
      {
        type: "jobresponse", jobId: JOB, responseId: `${JOB}-response`, state: "Ended_Completed", startTime: T0, endTime: T0 + 6_000,
        data: { position: { at: 3 }, qa: { visual: "ok" }, tighten: { torque: 70 }, verify: { torque_ok: true }, retighten: { torque: 85 } }
      }
    ])
    expect(end).toMatchObject({ due: null, active: false, waitsAdd: [], waitsRemove: ["com.example.station.torque.v1"] })
    expect(job.all("jobresponse")).toHaveLength(1)
  })
})
