import { describe, expect, it } from "@effect/vitest"
import { Job, push, recipeV11, stepJson, T0, transition } from "./EngineKit.js"

// Step flags and times (v1.1.0) in the engine: `Press.X`, `Press.T`, scheduled in the due index at
// the instant a comparison can turn true (no polling); and `order.*` fields of the job order.

const S = 1_000

/** Press: its command, then it must have run 5 s before Cool; Cool → Done when Press ran under 8 s. */
const pressJson = (operator = ">=") => ({
  Steps: [stepJson("Press", true), stepJson("Cool"), stepJson("Done"), stepJson("Slow")],
  Transitions: [
    transition("Press", "Cool", `Press.T ${operator} 5s && Press.X && !Cool.X`),
    transition("Cool", "Done", "Press.T < 8s && !Press.X"),
    transition("Cool", "Slow", "Press.T >= 8s", 1)
  ],
  Actions: [push("press", "Press"), push("cool", "Cool")]
})

describe("Step.T and Step.X", () => {
  it("a step waits for its own time; the due index holds the instant the comparison turns true", () => {
    const job = new Job(recipeV11(pressJson()))
    const waiting = job.answer("press", T0 + S)
    expect(job.state.active).toEqual([{ step: "Press", visit: 1, enteredAt: T0, checkedAt: T0 + S }])
    expect(waiting.due).toBe(T0 + 5 * S)
    expect(job.apply({ type: "tick" }, T0 + 5 * S - 1).changed).toBe(false)
    job.apply({ type: "tick" }, T0 + 5 * S)
    expect(job.activeSteps()).toEqual(["Cool"])
    // Only Press's time is read, so only its last length is kept.
    expect(job.state.stepTimes).toEqual({ Press: 5 * S })
  })

  it("a strict comparison turns true a millisecond later: the due index tries both instants", () => {
    const job = new Job(recipeV11(pressJson(">")))
    job.answer("press", T0 + S)
    expect(job.apply({ type: "tick" }, T0 + 5 * S)).toMatchObject({ changed: true, due: T0 + 5 * S + 1 })
    expect(job.activeSteps()).toEqual(["Press"])
    job.apply({ type: "tick" }, T0 + 5 * S + 1)
    expect(job.activeSteps()).toEqual(["Cool"])
  })

  it("a late sweep passes every threshold in one evaluation", () => {
    const job = new Job(recipeV11(pressJson(">")))
    job.answer("press", T0 + S)
    job.apply({ type: "tick" }, T0 + 9 * S)
    expect(job.activeSteps()).toEqual(["Cool"])
    expect(job.state.stepTimes).toEqual({ Press: 9 * S })
  })

  it("reads a left step's last activation length and that it is no longer active", () => {
    const fast = new Job(recipeV11(pressJson()))
    fast.answer("press", T0 + 6 * S)
    fast.answer("cool", T0 + 7 * S)
    expect(fast.state.status).toBe("completed")
    expect(fast.state.history.map((h) => h.step)).toEqual(["Press", "Cool", "Done"])

    const slow = new Job(recipeV11(pressJson()))
    slow.answer("press", T0 + 9 * S)
    slow.answer("cool", T0 + 10 * S)
    expect(slow.state.history.map((h) => h.step)).toEqual(["Press", "Cool", "Slow"])
  })

  it("does not count paused time", () => {
    const job = new Job(recipeV11(pressJson()))
    job.answer("press", T0 + S)
    job.apply({ type: "pause" }, T0 + 2 * S)
    job.apply({ type: "resume" }, T0 + 10 * S)
    expect(job.state.active).toMatchObject([{ step: "Press", heldMs: 8 * S }])
    expect(job.last.due).toBe(T0 + 13 * S)
    job.apply({ type: "tick" }, T0 + 13 * S)
    expect(job.activeSteps()).toEqual(["Cool"])
    expect(job.state.stepTimes).toEqual({ Press: 5 * S })
  })

  it("with every threshold behind it and nothing else to wait for, the job fails", () => {
    const job = new Job(recipeV11({ ...pressJson(), Transitions: [transition("Press", "Cool", "Press.T < 2s"), transition("Cool", "Done"), transition("Cool", "Slow", "false")] }))
    job.answer("press", T0 + 3 * S)
    expect(job.state.error).toBe("no transition out of Press has a condition that holds, and nothing its conditions read can change")
  })
})

describe("job order fields", () => {
  const orderJson = {
    Steps: [stepJson("Check", true), stepJson("Go")],
    Transitions: [transition("Check", "Go", "order.Priority > 3 && order.JobOrderParameters.1.Value == 'x' && Check.T < 1h")],
    Actions: [push("check", "Check"), push("go", "Go")],
    MaxJobDuration: "2h"
  }
  const order = (priority: number) => ({
    JobOrderID: "jo-1",
    Priority: priority,
    Description: "a long text the recipe never reads",
    JobOrderParameters: [{ ID: "a", Value: "big" }, { ID: "b", Value: "x" }]
  })

  it("keeps only the fields the conditions read", () => {
    const job = new Job(recipeV11(orderJson), T0, { order: order(1) })
    expect(job.state.order).toEqual({ Priority: 1, JobOrderParameters: [null, { Value: "x" }] })
    // A recipe that reads no order field keeps nothing.
    expect(new Job(recipeV11(pressJson()), T0, { order: order(1) }).state).not.toHaveProperty("order")
  })

  it("a waiting step goes on when an update of the job order makes its transition hold", () => {
    const job = new Job(recipeV11(orderJson), T0, { order: order(1) })
    job.answer("check", T0 + S)
    expect(job.state.active).toMatchObject([{ step: "Check", checkedAt: T0 + S }])
    expect(job.apply({ type: "order", order: { ...order(1), Description: "changed" } }, T0 + 2 * S)).toMatchObject({
      changed: false,
      note: "the job order fields the conditions read did not change"
    })
    job.apply({ type: "order", order: order(5) }, T0 + 3 * S)
    expect(job.activeSteps()).toEqual(["Go"])
    expect(job.state.order).toEqual({ Priority: 5, JobOrderParameters: [null, { Value: "x" }] })
  })
})
