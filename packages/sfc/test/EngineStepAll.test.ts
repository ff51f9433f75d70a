import { describe, expect, it } from "@effect/vitest"
import { correlationIdOf, type CounterValues, type EngineInput, type EngineOutput, type ExecutionState, start, step, stepAll, type StepAllOutput } from "@microdcs/sfc"
import { AUDIT, entriesOf, foldStep, JOB, linear, pull, push, recipeOf, SCOPE, stepJson, T0, transition, withCounters } from "./EngineKit.js"

// Several inputs of one job in one call (`stepAll`): the same as `step` over them in order.

const ID = "exec-1"

const started = (recipe = linear(["Load", "Unload"], [push("load", "Load"), push("unload", "Unload")]), executionId?: string) =>
  JSON.parse(JSON.stringify(start({ jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe, executionId }, T0).state)) as ExecutionState

const replyTo = (state: ExecutionState, action: string, data: unknown = {}): EngineInput => ({
  type: "event",
  correlationId: state.actions.find((r) => r.action === action)!.correlationId!,
  data
})

/** What `stepAll` must give for the fold's outputs. */
const expectFold = (all: StepAllOutput, outputs: ReadonlyArray<EngineOutput>, finalState: ExecutionState) => {
  expect(all.output.state).toStrictEqual(finalState)
  expect(all.output.outbox).toEqual(outputs.flatMap((o) => o.outbox))
  expect(all.output.log).toEqual(outputs.flatMap((o) => o.log))
  expect(all.output.changed).toBe(outputs.some((o) => o.changed))
  expect(all.perInput).toEqual(outputs.map((o) => ({ changed: o.changed, ...(o.note !== undefined ? { note: o.note } : {}), outbox: o.outbox, log: o.log })))
}

describe("stepAll", () => {
  it("applies two replies for one job in one call, as two steps would", () => {
    const recipe = recipeOf({
      Steps: [stepJson("Load", true), stepJson("Unload")],
      Transitions: [transition("Load", "Unload")],
      Actions: [push("left", "Load"), push("right", "Load"), push("unload", "Unload")]
    })
    const state = started(recipe)
    const inputs = [replyTo(state, "left"), replyTo(state, "right")]
    const all = stepAll(state, inputs, T0 + 10)
    expect(all.output.state.active.map((a) => a.step)).toEqual(["Unload"])
    expect(all.output.state.revision).toBe(state.revision + 2)
    expect(entriesOf(all.output, "command").map((c) => c.action)).toEqual(["unload"])
    expect(all.output.due).toBe(T0 + 10 + 10_000)
    expect(all.perInput.map((r) => [r.changed, r.outbox.length])).toEqual([[true, 0], [true, 1]])
    const folded = foldStep(state, inputs, T0 + 10)
    expectFold(all, folded.outputs, folded.state)
    // A single input gives what `step` gives.
    expect(stepAll(state, [inputs[0]!], T0 + 10).output).toEqual(step(state, inputs[0]!, T0 + 10))
  })

  it("applies an event and then a tick: the tick sees the state the event left", () => {
    const recipe = recipeOf({
      Steps: [stepJson("Load", true), stepJson("Wait")],
      Transitions: [transition("Load", "Wait")],
      Actions: [push("slow", "Load", { TimeoutSeconds: 1 }), push("fast", "Load", { TimeoutSeconds: 10 }), pull("wait", "Wait")]
    })
    const state = started(recipe)
    const now = T0 + 1_500
    const inputs: ReadonlyArray<EngineInput> = [replyTo(state, "fast"), { type: "tick" }]
    const all = stepAll(state, inputs, now)
    // `slow` is past its deadline: the tick sends it again; `fast` answered, so the step stays.
    expect(all.perInput.map((r) => entriesOf(r, "command").map((c) => `${c.action}#${c.attempt}`))).toEqual([[], ["slow#2"]])
    expect(all.output.due).toBe(now + 1_000)
    const folded = foldStep(state, inputs, now)
    expectFold(all, folded.outputs, folded.state)
    // The reply to `slow` and a tick: the job moves on and waits, the tick finds nothing due.
    const moved = stepAll(state, [replyTo(state, "slow"), replyTo(state, "fast"), { type: "tick" }], T0 + 500)
    expect(moved.perInput.map((r) => r.changed)).toEqual([true, true, false])
    expect(moved.output.waitsAdd.map((w) => w.typeId)).toEqual(["com.example.wait"])
  })

  it("leaves an input after a terminal state unchanged, with its note", () => {
    const state = started()
    const inputs: ReadonlyArray<EngineInput> = [{ type: "abort" }, replyTo(state, "load"), { type: "resume" }]
    const all = stepAll(state, inputs, T0 + 10)
    expect(all.output.state.status).toBe("aborted")
    expect(all.output.changed).toBe(true)
    expect(all.output.active).toBe(false)
    expect(all.output.due).toBeNull()
    expect(all.perInput.slice(1)).toEqual([
      { changed: false, note: "execution is aborted", outbox: [], log: [] },
      { changed: false, note: "execution is aborted", outbox: [], log: [] }
    ])
    const folded = foldStep(state, inputs, T0 + 10)
    expectFold(all, folded.outputs, folded.state)
  })

  it("gives each input its own note; the combined output has none", () => {
    const state = started()
    const inputs: ReadonlyArray<EngineInput> = [
      { type: "event", correlationId: "nobody" },
      replyTo(state, "load"),
      { type: "retry", ...AUDIT, action: "load" },
      { type: "event", eventType: "com.example.other" }
    ]
    const all = stepAll(state, inputs, T0 + 10)
    expect(all.perInput.map((r) => r.note)).toEqual([
      "no action is waiting for this event (nobody)",
      undefined,
      "retry refused: action load is not open (no command waiting for its reply or its next attempt, no event awaited)",
      "no action is waiting for this event (com.example.other)"
    ])
    expect(all.output.note).toBeUndefined()
    const folded = foldStep(state, inputs, T0 + 10)
    expectFold(all, folded.outputs, folded.state)
    // Nothing to do changes nothing.
    const none = stepAll(state, [inputs[0]!], T0 + 10)
    expect(none.output).toMatchObject({ changed: false, outbox: [], log: [], state })
    expect(stepAll(state, [], T0 + 10).output).toMatchObject({ changed: false, outbox: [], log: [], waitsAdd: [], waitsRemove: [], state })
  })

  it("gives a state without a log its execution id once: on the first input that changes it", () => {
    const recipe = linear(["Wait", "Unload"], [pull("wait", "Wait"), push("unload", "Unload")])
    const state = started(recipe)
    expect(state.log).toBeUndefined()
    const wait: EngineInput = { type: "event", eventType: "com.example.wait" }
    const inputs: ReadonlyArray<EngineInput> = [wait, { type: "event", correlationId: correlationIdOf(JOB, "unload", 1) }]
    const all = stepAll(state, inputs, T0 + 5, ID)
    expect(all.output.state.log?.executionId).toBe(ID)
    expect(all.perInput.every((r) => r.log.length > 0 && r.log.every((w) => w.type !== "node" || w.executionId === ID))).toBe(true)
    // The same as the id on the first input only: after it the state has a log.
    const firstOnly = foldStep(state, inputs, T0 + 5, undefined, (s, input) => step(s, input, T0 + 5, s === state ? ID : undefined))
    expectFold(all, firstOnly.outputs, firstOnly.state)
    // An input that changes nothing opens no log: the next one that changes the state does.
    const stray: EngineInput = { type: "event", correlationId: "nobody" }
    const late = stepAll(state, [stray, ...inputs], T0 + 5, ID)
    expect(late.perInput[0]).toEqual({ changed: false, note: "no action is waiting for this event (nobody)", outbox: [], log: [] })
    expect(late.perInput[1]!.log).toEqual(all.perInput[0]!.log)
    const folded = foldStep(state, [stray, ...inputs], T0 + 5, ID)
    expectFold(late, folded.outputs, folded.state)
    // Without an id, no log.
    expect(stepAll(state, inputs, T0 + 5).output.state.log).toBeUndefined()
  })

  it("stops the whole call for counters and reads them across the inputs in evaluation order", () => {
    const recipe = recipeOf({
      Steps: [stepJson("Tighten", true), stepJson("Pack"), stepJson("Inspect"), stepJson("Done")],
      Transitions: [
        transition("Tighten", "Pack", "counter.nok_1h < 3", 1),
        transition("Tighten", "Inspect", "counter.nok_1h >= 3", 2),
        transition("Pack", "Done", "counter.packed_1d < 100"),
        transition("Pack", "Inspect", "true", 1)
      ],
      Actions: [push("tighten", "Tighten"), push("pack", "Pack"), push("inspect", "Inspect"), push("done", "Done")]
    })
    const state = started(recipe)
    const tighten = replyTo(state, "tighten", { tool: "nr-3" })
    const inputs: ReadonlyArray<EngineInput> = [tighten, { type: "event", correlationId: correlationIdOf(JOB, "pack", 1) }]
    const read = (need: { readonly source: string }): CounterValues => (need.source === "Tighten" ? { nok_1h: 0 } : { packed_1d: 5 })
    const { result, needs, stops } = withCounters((values) => stepAll(state, inputs, T0 + 10, undefined, values), (r) => r.output.needsCounters, read)
    expect(needs.map((n) => `${n.source}:${n.counters.join(",")}`)).toEqual(["Tighten:nok_1h", "Pack:packed_1d"])
    // A call that stops changes nothing at all, not even for the inputs before the one that asked.
    for (const stop of stops) {
      expect(stop.output).toMatchObject({ state, changed: false, outbox: [], log: [] })
      expect(stop.perInput).toEqual([{ changed: false, outbox: [], log: [] }, { changed: false, outbox: [], log: [] }])
    }
    expect(result.output.needsCounters).toBeUndefined()
    expect(result.output.state.active.map((a) => a.step)).toEqual(["Done"])
    const folded = foldStep(state, inputs, T0 + 10, undefined, (s, input) =>
      withCounters((values) => step(s, input, T0 + 10, undefined, values), (o) => o.needsCounters, read).result
    )
    expectFold(result, folded.outputs, folded.state)
  })
})
