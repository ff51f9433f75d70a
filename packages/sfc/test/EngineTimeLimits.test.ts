import { describe, expect, it } from "@effect/vitest"
import type { LogWrite } from "@microdcs/sfc"
import { entriesOf, Job, pull, push, recipeV11, stepJson, T0, transition } from "./EngineKit.js"

// Time limits (v1.1.0): a step's MaxDuration (to OnMaxDuration, or the job fails) and the job's
// MaxJobDuration, kept in the due index like action deadlines: frozen by Pause, moved by an outage.

const S = 1_000
const ID = "job-1.1700000000000.abcd0123"

/** Press (30 s limit, then Rework; its command may take 60 s) → Done (or Rework when it says so); Rework → Done. */
const pressJson = (press: Record<string, unknown> = { MaxDuration: "30s", OnMaxDuration: "Rework" }, extra: Record<string, unknown> = {}) => ({
  Steps: [{ ...stepJson("Press", true), ...press }, stepJson("Rework"), stepJson("Done")],
  Transitions: [transition("Press", "Done"), transition("Press", "Rework", "press.rework", 1), transition("Rework", "Done")],
  Actions: [push("press", "Press", { TimeoutSeconds: 60 }), push("rework", "Rework"), push("done", "Done")],
  ...extra
})

const nodes = (log: ReadonlyArray<LogWrite>) =>
  log.flatMap((w) => (w.type === "node" && w.node.closedAt !== undefined ? [`${w.executionId === ID ? "X" : w.executionId}:${w.node.kind} ${w.node.name}`] : []))

describe("a step's MaxDuration", () => {
  it("is due with the step; when it runs out the step is left for OnMaxDuration, its open action dropped", () => {
    const job = new Job(recipeV11(pressJson()), T0, { executionId: ID })
    expect(job.state.active).toEqual([expect.objectContaining({ step: "Press", limitAt: T0 + 30 * S })])
    expect(job.last.due).toBe(T0 + 30 * S)
    expect(job.apply({ type: "tick" }, T0 + 30 * S - 1).changed).toBe(false)
    const out = job.apply({ type: "tick" }, T0 + 30 * S)
    expect(job.activeSteps()).toEqual(["Rework"])
    expect(entriesOf(out, "command").map((c) => [c.action, c.attempt])).toEqual([["rework", 1]])
    const timeout = out.log.find((w) => w.type === "node" && w.node.kind === "timeout")
    expect(timeout?.type === "node" && timeout.node).toMatchObject({ name: "Press", visit: 1, detail: { maxDuration: "30s", to: "Rework" } })
    expect(nodes(out.log)).toEqual(["X:timeout Press", "X:action press", "X:step Press"])
    // The press reply that comes late finds nothing waiting for it.
    expect(job.apply({ type: "event", correlationId: "x", data: {} }, T0 + 31 * S).note).toContain("no action is waiting")
  })

  it("without OnMaxDuration fails the job", () => {
    const job = new Job(recipeV11(pressJson({ MaxDuration: "30s" })))
    const out = job.apply({ type: "tick" }, T0 + 45 * S)
    expect(job.state).toMatchObject({ status: "failed", error: "step Press ran longer than its MaxDuration (30s)" })
    expect(entriesOf(out, "joborder")).toEqual([{ type: "joborder", jobId: "job-1", trigger: "Abort", reason: "step Press ran longer than its MaxDuration (30s)" }])
    expect(entriesOf(out, "command")).toEqual([])
  })

  it("ends a step that waits for a transition", () => {
    const job = new Job(recipeV11({ ...pressJson(), Transitions: [transition("Press", "Done", "press.ok"), transition("Rework", "Done")] }))
    job.answer("press", T0 + S, { ok: false })
    // MaxDuration is a way out, so the step waits instead of failing.
    expect(job.state.active).toMatchObject([{ step: "Press", checkedAt: T0 + S, limitAt: T0 + 30 * S }])
    expect(job.last.due).toBe(T0 + 30 * S)
    job.apply({ type: "tick" }, T0 + 30 * S)
    expect(job.activeSteps()).toEqual(["Rework"])
  })

  it("is not resent to: a resend due in the tick that left the step does not go out", () => {
    const job = new Job(recipeV11({ ...pressJson(), Actions: [push("press", "Press", { TimeoutSeconds: 30 }), push("rework", "Rework"), push("done", "Done")] }))
    const out = job.apply({ type: "tick" }, T0 + 30 * S)
    expect(entriesOf(out, "command").map((c) => c.action)).toEqual(["rework"])
  })

  it("on a branch path leaves the whole branch: the other paths stop", () => {
    const json = {
      Steps: [stepJson("Start", true), { ...stepJson("L"), MaxDuration: "5s", OnMaxDuration: "Recover" }, stepJson("R"), stepJson("After"), stepJson("Recover")],
      Transitions: [transition("Start", "Fork"), transition("Fork", "After"), transition("Recover", "After")],
      Actions: [push("l", "L"), pull("r", "R"), push("after", "After"), push("recover", "Recover")],
      Branches: [{ Name: "Fork", Type: "simultaneous", Branches: [["L"], ["R"]] }]
    }
    const job = new Job(recipeV11(json), T0, { executionId: ID })
    const out = job.apply({ type: "tick" }, T0 + 5 * S)
    expect(job.activeSteps()).toEqual(["Recover"])
    expect(job.state.branches).toEqual([])
    expect(job.state.actions.map((r) => r.action)).toEqual(["recover"])
    expect(out.waitsRemove).toEqual(["com.example.r"])
    const children = out.log.flatMap((w) => (w.type === "exec" && w.record.executionId !== ID ? [w.record.status] : []))
    expect(children).toEqual(["stopped", "stopped"])
    expect(nodes(out.log)).toContain("X:branch Fork")
  })

  it("freezes while paused and runs on with what was left; an outage moves it back", () => {
    const job = new Job(recipeV11(pressJson()))
    job.apply({ type: "pause" }, T0 + 10 * S)
    expect(job.state.active).toEqual([expect.objectContaining({ limitLeftMs: 20 * S })])
    expect(job.state.active[0]).not.toHaveProperty("limitAt")
    job.apply({ type: "resume" }, T0 + 100 * S)
    expect(job.state.active[0]).toMatchObject({ limitAt: T0 + 120 * S })
    expect(job.last.due).toBe(T0 + 120 * S)
    // An outage of the engine from 110 s to 130 s: the limit at 120 s inside it moves to 140 s.
    const outage = job.apply({ type: "outage", from: T0 + 110 * S, to: T0 + 130 * S }, T0 + 130 * S)
    expect(outage.changed).toBe(true)
    expect(job.state.active[0]).toMatchObject({ limitAt: T0 + 140 * S })
    // An outage that holds no deadline changes nothing.
    expect(job.apply({ type: "outage", from: T0 + 130 * S, to: T0 + 135 * S }, T0 + 135 * S).changed).toBe(false)
  })
})

describe("the job's MaxJobDuration", () => {
  const json = pressJson({}, { MaxJobDuration: "2min" })

  it("fails the job when it runs out, wherever the job is", () => {
    const job = new Job(recipeV11(json), T0, { executionId: ID })
    expect(job.state.jobLimitAt).toBe(T0 + 120 * S)
    job.answer("press", T0 + S)
    expect(job.last.due).toBe(T0 + 11 * S)
    // Done's command is overdue too: the job's limit goes first.
    const out = job.apply({ type: "tick" }, T0 + 120 * S)
    expect(job.state).toMatchObject({ status: "failed", error: "the job ran longer than its MaxJobDuration (2min)" })
    expect(entriesOf(out, "command")).toEqual([])
    expect(nodes(out.log).slice(0, 1)).toEqual(["X:timeout MaxJobDuration"])
  })

  it("does not count paused time", () => {
    const job = new Job(recipeV11(json))
    job.apply({ type: "pause" }, T0 + 60 * S)
    expect(job.state).toMatchObject({ jobLimitLeftMs: 60 * S })
    job.apply({ type: "resume" }, T0 + 600 * S)
    expect(job.state.jobLimitAt).toBe(T0 + 660 * S)
  })

  it("is not read from a v1.0.0 recipe (validation refuses it there; an old snapshot carries none)", () => {
    const job = new Job({ ...recipeV11(json), SchemaVersion: undefined } as never)
    expect(job.state.jobLimitAt).toBeUndefined()
    expect(job.state.active[0]).not.toHaveProperty("limitAt")
  })
})
