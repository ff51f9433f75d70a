import { describe, expect, it } from "@effect/vitest"
import { correlationIdOf, type EngineInput, step } from "@microdcs/sfc"
import { entriesOf, Job, JOB, linear, pull, push, recipeOf, stepJson, T0, transition } from "./EngineKit.js"

// Finishing (complete, fail, stop, abort), ignored events, and terminal states being absorbing.

const forkRecipe = recipeOf({
  Steps: ["Init", "Left", "Right", "End"].map((n, i) => stepJson(n, i === 0)),
  Branches: [{ Name: "Fork", Type: "simultaneous", Branches: [["Left"], ["Right"]] }],
  Transitions: [transition("Init", "Fork"), transition("Fork", "End")],
  Actions: [push("left", "Left"), pull("right", "Right"), push("end", "End")]
})

const everyInput: ReadonlyArray<EngineInput> = [
  { type: "event", correlationId: correlationIdOf(JOB, "left", 1), data: {} },
  { type: "event", eventType: "com.example.right", data: {} },
  { type: "tick" },
  { type: "outage", from: T0, to: T0 + 3_600_000 },
  { type: "pause" },
  { type: "resume" },
  { type: "stop" },
  { type: "abort", reason: "again" }
]

/** Every input on a terminal state: nothing moves, nothing goes out. */
const expectAbsorbing = (job: Job, now: number) => {
  for (const input of everyInput) {
    const out = step(job.state, input, now)
    expect(out).toMatchObject({ changed: false, outbox: [], due: null, active: false, waitsAdd: [], waitsRemove: [] })
    expect(out.state).toEqual(job.state)
    expect(out.note).toBe(`execution is ${job.state.status}`)
  }
}

describe("finishing", () => {
  it("completes a job whose step has no outgoing transition, with the results as data", () => {
    const job = new Job(linear(["Only"], [push("only", "Only")]))
    const out = job.answer("only", T0 + 7, { value: 42 })
    expect(out.outbox).toEqual([
      { type: "joborder", jobId: JOB, trigger: "Complete" },
      { type: "jobresponse", jobId: JOB, responseId: `${JOB}-response`, state: "Ended_Completed", startTime: T0, endTime: T0 + 7, data: { only: { value: 42 } } }
    ])
    expect(job.state).toMatchObject({ status: "completed", endedAt: T0 + 7, active: [], actions: [], branches: [] })
    expect(job.state.error).toBeUndefined()
    expectAbsorbing(job, T0 + 8)
  })

  it("completes at start a recipe whose only step has no actions", () => {
    const job = new Job(linear(["Nothing"], []))
    expect(job.last.outbox.map((e) => e.type === "joborder" ? e.trigger : e.type)).toEqual(["Run", "Complete", "jobresponse"])
    expect(job.last).toMatchObject({ active: false, due: null })
  })

  it("fails the job naming the step when outgoing transitions exist but none holds", () => {
    const recipe = recipeOf({
      Steps: [stepJson("Check", true), stepJson("Good"), stepJson("Bad")],
      Transitions: [transition("Check", "Good", "score > 5"), transition("Check", "Bad", "score < 2")],
      Actions: [push("check", "Check")]
    })
    const job = new Job(recipe)
    const out = job.answer("check", T0 + 1, { score: 3 })
    const error = "no transition out of Check has a condition that holds"
    expect(job.state).toMatchObject({ status: "failed", error })
    expect(out.outbox).toEqual([
      { type: "joborder", jobId: JOB, trigger: "Abort", reason: error },
      { type: "jobresponse", jobId: JOB, responseId: `${JOB}-response`, state: "Aborted", startTime: T0, endTime: T0 + 1, data: { check: { score: 3 } }, error }
    ])
    expectAbsorbing(job, T0 + 2)
  })

  it("fails the job when a reply carries an error", () => {
    const job = new Job(forkRecipe)
    const out = job.answer("left", T0 + 1, { partial: true }, "spindle stalled")
    expect(job.state).toMatchObject({ status: "failed", error: "action left failed: spindle stalled" })
    expect(entriesOf(out, "jobresponse")[0]).toMatchObject({ state: "Aborted", error: "action left failed: spindle stalled", data: {} })
    expect(out.waitsRemove).toEqual(["com.example.right"])
  })

  it("stops in the middle of a branch: terminal, one response, no commands, every wait left", () => {
    const job = new Job(forkRecipe)
    const out = job.apply({ type: "stop" }, T0 + 5)
    expect(out.outbox).toEqual([
      { type: "jobresponse", jobId: JOB, responseId: `${JOB}-response`, state: "Ended_Completed", startTime: T0, endTime: T0 + 5, data: {} }
    ])
    expect(out).toMatchObject({ changed: true, due: null, active: false, waitsAdd: [], waitsRemove: ["com.example.right"] })
    expect(job.state).toMatchObject({ status: "stopped", active: [], branches: [], actions: [] })
    expect(job.state.history).toEqual([
      { step: "Init", visit: 1, enteredAt: T0, leftAt: T0 },
      { step: "Left", visit: 1, enteredAt: T0, leftAt: T0 + 5 },
      { step: "Right", visit: 1, enteredAt: T0, leftAt: T0 + 5 }
    ])
    expectAbsorbing(job, T0 + 6)
    expect(job.all("jobresponse")).toHaveLength(1)
  })

  it("aborts in the middle of a branch, also from pause, with the reason as the error", () => {
    const job = new Job(forkRecipe)
    job.answer("left", T0 + 1, { l: 1 })
    job.apply({ type: "pause" }, T0 + 2)
    const out = job.apply({ type: "abort", reason: "operator abort" }, T0 + 3)
    expect(out.outbox).toEqual([
      { type: "jobresponse", jobId: JOB, responseId: `${JOB}-response`, state: "Aborted", startTime: T0, endTime: T0 + 3, data: { left: { l: 1 } }, error: "operator abort" }
    ])
    expect(job.state).toMatchObject({ status: "aborted", error: "operator abort", endedAt: T0 + 3 })
    expect(job.state.pausedAt).toBeUndefined()
    expect(out.waitsRemove).toEqual(["com.example.right"])
    expectAbsorbing(job, T0 + 4)
  })

  it("gives an abort without a reason a default error", () => {
    const job = new Job(forkRecipe)
    job.apply({ type: "abort" }, T0 + 1)
    expect(job.state.error).toBe("aborted by the MES")
  })
})

describe("ignored events", () => {
  const ignored = (job: Job, input: EngineInput) => {
    const before = job.state
    const out = step(before, input, T0 + 50)
    expect(out).toMatchObject({ changed: false, outbox: [], waitsAdd: [], waitsRemove: [], active: true })
    expect(out.state).toEqual(before)
    expect(out.note).toMatch(/^no action is waiting for this event/)
    return out
  }

  it("ignores unknown correlation ids, types nobody waits for, and events without either", () => {
    const job = new Job(forkRecipe)
    ignored(job, { type: "event", correlationId: "00000000-0000-5000-8000-000000000000", data: {} })
    ignored(job, { type: "event", correlationId: correlationIdOf(JOB, "left", 2), data: {} })
    ignored(job, { type: "event", eventType: "com.example.left", data: {} }) // a command's type, but no correlation id
    ignored(job, { type: "event", eventType: "com.example.nobody", data: {} })
    expect(ignored(job, { type: "event", data: {} }).note).toContain("no id")
  })

  it("ignores a redelivered reply once its action completed, and a reply for a past visit", () => {
    const job = new Job(forkRecipe)
    const id = job.open("left").correlationId!
    job.answer("left", T0 + 1, { first: true })
    ignored(job, { type: "event", correlationId: id, data: { second: true } })
    job.answer("right", T0 + 2)
    ignored(job, { type: "event", eventType: "com.example.right", data: {} })
    expect(job.state.results).toEqual({ left: { first: true }, right: {} })
  })

  it("keeps the due deadline of an unchanged state", () => {
    const job = new Job(forkRecipe)
    expect(ignored(job, { type: "event", eventType: "x" }).due).toBe(job.last.due)
  })
})
