import { describe, expect, it } from "@effect/vitest"
import { correlationIdOf, type EngineOutput, type LogWrite } from "@microdcs/sfc"
import { AUDIT, entriesOf, Job, JOB, linear, pull, push, recipeOf, stepJson, T0, transition } from "./EngineKit.js"

// The operator's audited interventions that move a job: skip a step, force a transition.

const ID = "job-1.1700000000000.abcd0123"
const by = "cli:alice@host"

/** The node writes of an output as `{seq} {kind} {name}[ open]` (the job's own execution). */
const nodes = (out: EngineOutput) =>
  out.log.flatMap((w) => (w.type === "node" ? [`${w.executionId === ID ? "" : `${w.executionId}:`}${w.node.seq} ${w.node.kind} ${w.node.name}${w.node.closedAt === undefined ? " open" : ""}`] : []))

const nodeOf = (log: ReadonlyArray<LogWrite>, kind: string) => log.flatMap((w) => (w.type === "node" && w.node.kind === kind ? [w.node] : []))[0]

/** Press (a command and an event wait) then Next; Press may also go to Rework when its result says so. */
const press = () =>
  recipeOf({
    Steps: ["Press", "Next", "Rework"].map((n, i) => stepJson(n, i === 0)),
    Transitions: [transition("Press", "Next", "press.ok == true", 1), transition("Press", "Rework", "press.ok == false", 2), transition("Rework", "Next")],
    Actions: [push("press", "Press"), pull("scan", "Press"), push("next", "Next"), push("rework", "Rework")]
  })

describe("skip-step", () => {
  it("abandons the step's open actions (no stop is sent) and takes the transition to the target without its condition", () => {
    const job = new Job(press(), T0, { executionId: ID })
    const out = job.apply({ type: "skip-step", ...AUDIT, step: "Press", target: "Rework" }, T0 + 5)
    expect(job.activeSteps()).toEqual(["Rework"])
    // The one command is the target's; the abandoned command gets nothing (the station may still carry it out).
    expect(entriesOf(out, "command").map((c) => c.action)).toEqual(["rework"])
    expect(out.outbox.map((e) => e.type)).toEqual(["command"])
    expect(out.waitsRemove).toEqual(["com.example.scan"])
    expect(nodes(out)).toEqual(["1 action press", "2 action scan", "3 skip-step Press", "0 step Press", "4 step Rework open", "5 action rework open"])
    expect(nodeOf(out.log, "skip-step")).toMatchObject({ visit: 1, detail: { by, reason: "station was down", target: "Rework", abandoned: ["press", "scan"] } })
    expect(nodeOf(out.log, "action")?.detail).toMatchObject({ abandoned: `step Press skipped by ${by}` })
    expect(job.state.interventions).toEqual([{ at: T0 + 5, intervention: "skip-step", name: "Press", by: AUDIT.origin, reason: AUDIT.reason }])
    expect(job.state.history.find((h) => h.step === "Press")?.leftAt).toBe(T0 + 5)
    // The abandoned command's late reply finds no action: ignored.
    const late = job.apply({ type: "event", correlationId: correlationIdOf(JOB, "press", 1), data: { ok: true } }, T0 + 6)
    expect(late).toMatchObject({ changed: false, note: expect.stringMatching(/no action is waiting/) })
  })

  it("without a target takes the step's only transition; a step with several needs one (refused, listing them)", () => {
    const job = new Job(press())
    const refused = job.apply({ type: "skip-step", ...AUDIT, step: "Press" }, T0 + 1)
    expect(refused).toMatchObject({ changed: false, outbox: [], note: "skip-step refused: step Press has 2 transitions (to Next, Rework): name the target" })
    job.apply({ type: "skip-step", ...AUDIT, step: "Press", target: "Rework" }, T0 + 2)
    job.apply({ type: "skip-step", ...AUDIT, step: "Rework" }, T0 + 3)
    expect(job.activeSteps()).toEqual(["Next"])
    expect(job.state.interventions?.map((i) => i.name)).toEqual(["Press", "Rework"])
  })

  it("skips a final step as if its actions had completed: the job completes", () => {
    const job = new Job(linear(["Load", "Unload"], [push("load", "Load"), push("unload", "Unload")]))
    job.answer("load", T0 + 1, { done: 1 })
    const out = job.apply({ type: "skip-step", ...AUDIT, step: "Unload" }, T0 + 2)
    expect(job.state.status).toBe("completed")
    expect(entriesOf(out, "jobresponse")).toMatchObject([{ state: "Ended_Completed", data: { load: { done: 1 } } }])
  })

  it("a step on a branch path goes on along its path (the branch converges as usual); a target is refused", () => {
    const job = new Job(recipeOf({
      Steps: ["Init", "A1", "A2", "B1", "After"].map((n, i) => stepJson(n, i === 0)),
      Branches: [{ Name: "Fork", Type: "simultaneous", Branches: [["A1", "A2"], ["B1"]] }],
      Transitions: [transition("Init", "Fork"), transition("Fork", "After")],
      Actions: [push("init", "Init"), push("a1", "A1"), push("a2", "A2"), pull("b1", "B1"), push("after", "After")]
    }), T0, { executionId: ID })
    job.answer("init", T0 + 1)
    expect(job.apply({ type: "skip-step", ...AUDIT, step: "A1", target: "After" }, T0 + 2).note).toBe(
      "skip-step refused: step A1 is on a path of branch Fork: it goes on along its path, so no target can be given"
    )
    const out = job.apply({ type: "skip-step", ...AUDIT, step: "A1" }, T0 + 3)
    expect(job.activeSteps()).toEqual(["B1", "A2"])
    // The node is written in the path's child execution, where the step runs.
    expect(out.log.find((w) => w.type === "node" && w.node.kind === "skip-step")).toMatchObject({ executionId: `${ID}.Fork.0.1`, node: { name: "A1" } })
    job.apply({ type: "skip-step", ...AUDIT, step: "B1" }, T0 + 4)
    job.apply({ type: "skip-step", ...AUDIT, step: "A2" }, T0 + 5)
    expect(job.activeSteps()).toEqual(["After"])
    expect(job.state.branches).toEqual([])
  })
})

describe("force-transition", () => {
  it("takes a transition by its names regardless of its condition, leaving the step's open actions", () => {
    const job = new Job(press(), T0, { executionId: ID })
    job.answer("press", T0 + 1, { ok: true })
    const out = job.apply({ type: "force-transition", ...AUDIT, transition: { source: "Press", target: "Rework" } }, T0 + 2)
    expect(job.activeSteps()).toEqual(["Rework"])
    expect(entriesOf(out, "command").map((c) => c.action)).toEqual(["rework"])
    expect(nodeOf(out.log, "force-transition")).toMatchObject({
      name: "Press -> Rework", detail: { by, reason: "station was down", transition: 1, condition: "press.ok == false", abandoned: ["scan"] }
    })
    expect(job.state.interventions).toEqual([{ at: T0 + 2, intervention: "force-transition", name: "Press -> Rework", by: AUDIT.origin, reason: AUDIT.reason }])
    // The press result stays the job's: the step's done action was not abandoned.
    expect(job.state.results).toEqual({ press: { ok: true } })
  })

  it("takes a transition by its place in the recipe's Transitions (from 0)", () => {
    const job = new Job(press())
    job.apply({ type: "force-transition", ...AUDIT, transition: { index: 0 } }, T0 + 1)
    expect(job.activeSteps()).toEqual(["Next"])
  })

  it("refuses a transition the recipe lacks, one out of a branch, one whose step is not active: nothing changes", () => {
    const job = new Job(press())
    const refuse = (transition: { source: string; target: string } | { index: number }) => {
      const before = job.state
      const out = job.apply({ type: "force-transition", ...AUDIT, transition }, T0 + 1)
      expect(out).toMatchObject({ changed: false, outbox: [], log: [] })
      expect(out.state).toEqual(before)
      return out.note
    }
    expect(refuse({ source: "Press", target: "Press" })).toBe("force-transition refused: the recipe has no transition from Press to Press")
    expect(refuse({ index: 7 })).toBe("force-transition refused: the recipe has no transition 7 (it has 3, numbered from 0)")
    expect(refuse({ index: -1 })).toBe("force-transition refused: transition index -1 is not a whole number from 0")
    expect(refuse({ source: "Rework", target: "Next" })).toBe("force-transition refused: step Rework is not active (active: Press)")
    const forked = new Job(recipeOf({
      Steps: [stepJson("Init", true), stepJson("A"), stepJson("After")],
      Branches: [{ Name: "Fork", Type: "simultaneous", Branches: [["A"]] }],
      Transitions: [transition("Init", "Fork"), transition("Fork", "After")],
      Actions: [push("init", "Init"), pull("a", "A")]
    }))
    forked.answer("init", T0 + 1)
    expect(forked.apply({ type: "force-transition", ...AUDIT, transition: { source: "Fork", target: "After" } }, T0 + 2).note).toMatch(
      /leaves branch Fork: it is taken when the branch's paths end; skip the steps of its paths instead/
    )
  })
})
