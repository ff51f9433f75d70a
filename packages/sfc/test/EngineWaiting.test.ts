import { describe, expect, it } from "@effect/vitest"
import { COUNTER_RECHECK_MS, type CounterNeed } from "@microdcs/sfc"
import { entriesOf, Job, pull, push, recipeOf, recipeV11, stepJson, T0, transition } from "./EngineKit.js"

// Waiting transitions (v1.1.0): a step whose actions are done and of whose transitions none holds
// waits while something they read can change; v1.0.0 fails the job there, as it always did.

const S = 1_000

/** Check waits for the counter to drop below 3; its other way out needs the action's result. */
const checkJson = {
  Steps: [stepJson("Check", true), stepJson("Go"), stepJson("Stop")],
  Transitions: [transition("Check", "Go", "counter.nok < 3"), transition("Check", "Stop", "check.stop == true")],
  Actions: [push("check", "Check"), push("go", "Go"), push("stop", "Stop")]
}

describe("waiting transitions", () => {
  it("v1.1.0: the step stays active, and its counters are read again on the sweep until a transition holds", () => {
    const job = new Job(recipeV11(checkJson))
    const needs: Array<CounterNeed> = []
    const waiting = job.applyReading({ type: "event", correlationId: job.open("check").correlationId!, data: {} }, T0 + S, () => ({ nok: 5 }), needs)
    expect(needs.map((n) => n.source)).toEqual(["Check"])
    expect(waiting).toMatchObject({ changed: true, outbox: [], due: T0 + S + COUNTER_RECHECK_MS, active: true })
    expect(job.state.status).toBe("running")
    expect(job.state.active).toEqual([{ step: "Check", visit: 1, enteredAt: T0, checkedAt: T0 + S }])

    // Early: nothing is read, nothing changes.
    expect(job.applyReading({ type: "tick" }, T0 + S + COUNTER_RECHECK_MS - 1, () => ({ nok: 0 }))).toMatchObject({ changed: false })
    // Due: read again, still too many; the next read is a recheck interval later.
    const again = job.applyReading({ type: "tick" }, T0 + 7 * S, () => ({ nok: 4 }))
    expect(again).toMatchObject({ changed: true, due: T0 + 7 * S + COUNTER_RECHECK_MS })
    expect(job.state.active[0]?.checkedAt).toBe(T0 + 7 * S)
    // The counter dropped: the job moves on.
    const moved = job.applyReading({ type: "tick" }, T0 + 13 * S, () => ({ nok: 2 }))
    expect(job.activeSteps()).toEqual(["Go"])
    expect(entriesOf(moved, "command").map((c) => c.action)).toEqual(["go"])
    expect(moved.due).toBe(T0 + 13 * S + 10 * S)
  })

  it("v1.0.0: the same recipe fails the job where v1.1.0 waits", () => {
    const job = new Job(recipeOf(checkJson))
    job.applyReading({ type: "event", correlationId: job.open("check").correlationId!, data: {} }, T0 + S, () => ({ nok: 5 }))
    expect(job.state).toMatchObject({ status: "failed", error: "no transition out of Check has a condition that holds" })
  })

  it("v1.1.0: fails when nothing its transitions read can change (no counter, no open action, no step time, no MaxDuration)", () => {
    const job = new Job(recipeV11({ ...checkJson, Transitions: [transition("Check", "Go", "check.ok"), transition("Check", "Stop", "check.stop")] }))
    job.answer("check", T0 + S, { ok: false })
    expect(job.state).toMatchObject({
      status: "failed",
      error: "no transition out of Check has a condition that holds, and nothing its conditions read can change"
    })
  })

  it("v1.1.0: waits for a pulse that answers after the step's N actions; fails once it answered and nothing holds", () => {
    const job = new Job(
      recipeV11({
        Steps: [stepJson("Scan", true), stepJson("Done")],
        Transitions: [transition("Scan", "Done", "label.ok")],
        Actions: [push("scan", "Scan"), pull("label", "Scan", { Qualifier: "P" }), push("done", "Done")]
      })
    )
    const waiting = job.answer("scan", T0 + S, { ok: true })
    expect(job.state.active).toMatchObject([{ step: "Scan", checkedAt: T0 + S }])
    // Nothing is due: the wait ends with the pulse's event, not with a clock.
    expect(waiting.due).toBeNull()
    // The pulse answered, not ok: now nothing its transitions read can change, so the job fails.
    job.answer("label", T0 + 2 * S, { ok: false })
    expect(job.state).toMatchObject({ status: "failed", error: "no transition out of Scan has a condition that holds, and nothing its conditions read can change" })
  })

  it("v1.1.0: a pulse's late result moves the waiting step on", () => {
    const job = new Job(
      recipeV11({
        Steps: [stepJson("Scan", true), stepJson("Done")],
        Transitions: [transition("Scan", "Done", "label.ok")],
        Actions: [push("scan", "Scan"), pull("label", "Scan", { Qualifier: "P" }), push("done", "Done")]
      })
    )
    job.answer("scan", T0 + S, {})
    const moved = job.answer("label", T0 + 3 * S, { ok: true })
    expect(job.activeSteps()).toEqual(["Done"])
    expect(entriesOf(moved, "command").map((c) => c.action)).toEqual(["done"])
  })

  it("v1.1.0: a waiting job that is paused is due never; Resume reads its counters again", () => {
    const job = new Job(recipeV11(checkJson))
    job.applyReading({ type: "event", correlationId: job.open("check").correlationId!, data: {} }, T0 + S, () => ({ nok: 5 }))
    expect(job.apply({ type: "pause" }, T0 + 2 * S).due).toBeNull()
    const needs: Array<CounterNeed> = []
    job.applyReading({ type: "resume" }, T0 + 60 * S, () => ({ nok: 0 }), needs)
    expect(needs).toHaveLength(1)
    expect(job.activeSteps()).toEqual(["Go"])
  })
})

describe("waiting transitions and selection branches (v1.1.0)", () => {
  /** Pick → selection branch Which (paths by counter) at priority 0, or Fallback at priority 1 when `pick.fallback`. */
  const selectJson = (fallback: string) => ({
    Steps: [stepJson("Pick", true), stepJson("A"), stepJson("B"), stepJson("Fallback"), stepJson("End")],
    Transitions: [
      transition("Pick", "Which", "true", 0),
      transition("Pick", "Fallback", fallback, 1),
      transition("Which", "A", "counter.mode == 1"),
      transition("Which", "B", "counter.mode == 2"),
      transition("Which", "End", "true"),
      transition("Fallback", "End", "true")
    ],
    Actions: [push("pick", "Pick"), push("a", "A"), push("b", "B"), push("fallback", "Fallback")],
    Branches: [{ Name: "Which", Type: "selection", Branches: [["A"], ["B"]] }]
  })

  it("a transition into a selection branch holds only with one of its paths: the next candidate is taken", () => {
    const job = new Job(recipeV11(selectJson("pick.fallback")))
    job.applyReading({ type: "event", correlationId: job.open("pick").correlationId!, data: { fallback: true } }, T0 + S, () => ({ mode: 7 }))
    expect(job.activeSteps()).toEqual(["Fallback"])
    // v1.0.0 picks the branch first and fails there.
    const old = new Job(recipeOf(selectJson("pick.fallback")))
    old.applyReading({ type: "event", correlationId: old.open("pick").correlationId!, data: { fallback: true } }, T0 + S, () => ({ mode: 7 }))
    expect(old.state.error).toBe("no path of selection branch Which has a condition that holds")
  })

  it("with no path and no other way, the step before the branch waits, and enters the path once its counter says so", () => {
    const job = new Job(recipeV11(selectJson("pick.fallback")))
    job.applyReading({ type: "event", correlationId: job.open("pick").correlationId!, data: {} }, T0 + S, () => ({ mode: 7 }))
    expect(job.state.active).toMatchObject([{ step: "Pick", checkedAt: T0 + S }])
    expect(job.state.branches).toEqual([])
    job.applyReading({ type: "tick" }, T0 + S + COUNTER_RECHECK_MS, () => ({ mode: 2 }))
    expect(job.activeSteps()).toEqual(["B"])
    expect(job.state.branches).toMatchObject([{ name: "Which", runningPaths: [1] }])
  })
})

describe("a waiting branch (v1.1.0)", () => {
  const forkJson = {
    Steps: [stepJson("Start", true), stepJson("L"), stepJson("R"), stepJson("After")],
    Transitions: [transition("Start", "Fork"), transition("Fork", "After", "counter.ready > 0")],
    Actions: [push("l", "L"), push("r", "R"), push("after", "After")],
    Branches: [{ Name: "Fork", Type: "simultaneous", Branches: [["L"], ["R"]] }]
  }

  it("converged with no transition holding, it waits with no path running, then is left", () => {
    const job = new Job(recipeV11(forkJson))
    job.answer("l", T0 + S)
    const waiting = job.applyReading({ type: "event", correlationId: job.open("r").correlationId!, data: {} }, T0 + 2 * S, () => ({ ready: 0 }))
    expect(job.state.active).toEqual([])
    expect(job.state.branches).toEqual([{ name: "Fork", enteredAt: T0, runningPaths: [], checkedAt: T0 + 2 * S }])
    expect(waiting).toMatchObject({ due: T0 + 2 * S + COUNTER_RECHECK_MS, active: true })
    job.applyReading({ type: "tick" }, T0 + 2 * S + COUNTER_RECHECK_MS, () => ({ ready: 1 }))
    expect(job.activeSteps()).toEqual(["After"])
    expect(job.state.branches).toEqual([])
  })

  it("v1.0.0 fails the same branch", () => {
    const job = new Job(recipeOf(forkJson))
    job.answer("l", T0 + S)
    job.applyReading({ type: "event", correlationId: job.open("r").correlationId!, data: {} }, T0 + 2 * S, () => ({ ready: 0 }))
    expect(job.state.error).toBe("no transition out of Fork has a condition that holds")
  })
})
