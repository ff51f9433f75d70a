import { describe, expect, it } from "@effect/vitest"
import { type CounterValues, type ExecutionState, start, step } from "@microdcs/sfc"
import { JOB, push, recipeOf, SCOPE, stepJson, T0, transition } from "./EngineKit.js"

/**
 * The pure core with counters in conditions: a call that reaches transitions naming counters
 * stops and says what it needs; called again with the values, it moves.
 */

const tighten = (extraSteps: ReadonlyArray<object> = [], transitions: ReadonlyArray<object> = []) =>
  recipeOf({
    Steps: [stepJson("Tighten", true), stepJson("Pack"), stepJson("Inspect"), ...extraSteps],
    Transitions: [
      transition("Tighten", "Pack", "counter.nok_1h < 3", 1),
      transition("Tighten", "Inspect", "counter.nok_1h >= 3", 2),
      ...transitions
    ],
    Actions: [push("tighten", "Tighten"), push("pack", "Pack"), push("inspect", "Inspect")]
  })

const started = (recipe = tighten()) => {
  const out = start({ jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe }, T0)
  expect(out.needsCounters).toBeUndefined()
  return JSON.parse(JSON.stringify(out.state)) as ExecutionState
}

const replyTo = (state: ExecutionState, action: string, data: unknown) => ({
  type: "event" as const,
  correlationId: state.actions.find((r) => r.action === action)!.correlationId!,
  data
})

const activeSteps = (state: ExecutionState) => state.active.map((a) => a.step)

describe("engine core: counters in transitions", () => {
  it("stops and names what it needs, changing nothing", () => {
    const state = started()
    const input = replyTo(state, "tighten", { tool: "nr-3" })
    const out = step(state, input, T0 + 10)
    expect(out.needsCounters).toEqual({ source: "Tighten", counters: ["nok_1h"], results: { tighten: { tool: "nr-3" } } })
    expect(out.changed).toBe(false)
    expect(out.outbox).toEqual([])
    expect(out.state).toEqual(state)
  })

  it("goes one way below the limit and the other way at it", () => {
    const state = started()
    const input = replyTo(state, "tighten", { tool: "nr-3" })
    const below = step(state, input, T0 + 10, undefined, [{ nok_1h: 2 }])
    expect(below.needsCounters).toBeUndefined()
    expect(activeSteps(below.state)).toEqual(["Pack"])
    const at = step(state, input, T0 + 10, undefined, [{ nok_1h: 3 }])
    expect(activeSteps(at.state)).toEqual(["Inspect"])
  })

  it("fails the job naming the counter the source has no value for", () => {
    const state = started()
    const out = step(state, replyTo(state, "tighten", {}), T0 + 10, undefined, [{ other: 1 }])
    expect(out.state.status).toBe("failed")
    expect(out.state.error).toBe("transition out of Tighten: counter nok_1h has no value (the counter source has no value for it)")
    const none = step(state, replyTo(state, "tighten", {}), T0 + 10, undefined, [null])
    expect(none.state.error).toContain("no counter source is configured")
  })

  it("asks once per evaluation, in order, when one call evaluates several sources", () => {
    // Pack has no actions, so leaving Tighten enters Pack and leaves it at once: two evaluations.
    const recipe = recipeOf({
      Steps: [stepJson("Tighten", true), stepJson("Pack"), stepJson("Done"), stepJson("Inspect")],
      Transitions: [
        transition("Tighten", "Pack", "counter.nok_1h < 3"),
        transition("Tighten", "Inspect", "true", 1),
        transition("Pack", "Done", "counter.packed_1d < 100"),
        transition("Pack", "Inspect", "true", 1)
      ],
      Actions: [push("tighten", "Tighten"), push("done", "Done"), push("inspect", "Inspect")]
    })
    const state = started(recipe)
    const input = replyTo(state, "tighten", { tool: "nr-3" })
    const values: Array<CounterValues> = []
    const asked: Array<string> = []
    let out = step(state, input, T0 + 10, undefined, values)
    while (out.needsCounters) {
      asked.push(`${out.needsCounters.source}:${out.needsCounters.counters.join(",")}`)
      values.push(out.needsCounters.source === "Tighten" ? { nok_1h: 0 } : { packed_1d: 5 })
      out = step(state, input, T0 + 10, undefined, values)
    }
    expect(asked).toEqual(["Tighten:nok_1h", "Pack:packed_1d"])
    expect(activeSteps(out.state)).toEqual(["Done"])
    expect(out.state.history.map((h) => h.step)).toEqual(["Tighten", "Pack", "Done"])
  })

  it("start asks too when the initial step leaves at once, and a selection branch chooses by a counter", () => {
    const recipe = recipeOf({
      Steps: [stepJson("Check", true), stepJson("Fast"), stepJson("Slow")],
      Branches: [{ Name: "Route", Type: "selection", Branches: [["Fast"], ["Slow"]] }],
      Transitions: [
        transition("Check", "Route"),
        transition("Route", "Fast", "counter.queue < 5"),
        transition("Route", "Slow", "counter.queue >= 5")
      ],
      Actions: [push("fast", "Fast"), push("slow", "Slow")]
    })
    const params = { jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe }
    const first = start(params, T0)
    expect(first.needsCounters).toEqual({ source: "Route", counters: ["queue"], results: {} })
    expect(first.changed).toBe(false)
    expect(first.outbox).toEqual([])
    expect(activeSteps(start(params, T0, [{ queue: 9 }]).state)).toEqual(["Slow"])
    expect(activeSteps(start(params, T0, [{ queue: 1 }]).state)).toEqual(["Fast"])
  })

  it("reads nothing when a transition without counters holds first", () => {
    const recipe = recipeOf({
      Steps: [stepJson("Tighten", true), stepJson("Pack"), stepJson("Inspect")],
      Transitions: [
        transition("Tighten", "Pack", "tighten.ok", 1),
        transition("Tighten", "Inspect", "counter.nok_1h >= 3 || counter.nok_1d > 9", 2),
        transition("Tighten", "Pack", "true", 3)
      ],
      Actions: [push("tighten", "Tighten"), push("pack", "Pack"), push("inspect", "Inspect")]
    })
    const state = started(recipe)
    const ok = step(state, replyTo(state, "tighten", { ok: true }), T0 + 10)
    expect(ok.needsCounters).toBeUndefined()
    expect(activeSteps(ok.state)).toEqual(["Pack"])
    // Once the evaluation reaches the counters, it asks for those of that transition and the later ones.
    const nok = step(state, replyTo(state, "tighten", { ok: false }), T0 + 10)
    expect(nok.needsCounters?.counters).toEqual(["nok_1h", "nok_1d"])
    const moved = step(state, replyTo(state, "tighten", { ok: false }), T0 + 10, undefined, [{ nok_1h: 0, nok_1d: 0 }])
    expect(activeSteps(moved.state)).toEqual(["Pack"])
  })
})
