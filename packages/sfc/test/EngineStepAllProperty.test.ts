import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  type CounterNeed,
  type CounterValues,
  type EngineInput,
  type EngineOutput,
  type ExecutionState,
  indexesOf,
  type Recipe,
  start,
  step,
  stepAll,
  type StepAllOutput
} from "@microdcs/sfc"
import { type Op, op, recipe, resultData } from "./EngineArbitraries.js"
import { recipeV11 } from "./EngineArbitrariesV11.js"
import { AUDIT, foldStep, JOB, push, pull, recipeOf, SCOPE, stepJson, T0, transition, withCounters } from "./EngineKit.js"

// `stepAll` is the fold of `step`: random recipes, random batches of inputs (each batch one call
// at one time), and the same batches with counters read through the runtime's loop.

const ID = "exec-1"

/** One call: the clock moves by `dt` (or to the due deadline), then the inputs. */
interface Batch {
  readonly dt: number
  readonly toDue: boolean
  readonly ops: ReadonlyArray<Op | { readonly kind: "retry"; readonly pick: number }>
}

const batch = (ops: fc.Arbitrary<Batch["ops"][number]>): fc.Arbitrary<Batch> =>
  fc.record({ dt: fc.integer({ min: 0, max: 8_000 }), toDue: fc.boolean(), ops: fc.array(ops, { maxLength: 6 }) })
const withRetry = fc.oneof({ weight: 12, arbitrary: op }, { weight: 1, arbitrary: fc.record({ kind: fc.constant("retry" as const), pick: fc.nat() }) })

const openRuns = (state: ExecutionState, states: ReadonlyArray<string>) => state.actions.filter((r) => states.includes(r.state))

/**
 * An abstract input made concrete against the state the inputs before it left: a reply by the
 * correlation id of a dispatched command, an event by the type a waiting action waits for.
 */
const resolve = (o: Batch["ops"][number], state: ExecutionState, now: number, pastIds: ReadonlyArray<string>): EngineInput => {
  const pick = (states: ReadonlyArray<string>, at: number) => openRuns(state, states)[at % Math.max(1, openRuns(state, states).length)]
  const typeOf = (action: string) => state.recipe.Actions.find((a) => a.Name === action)!
  switch (o.kind) {
    case "answer":
    case "prompt": {
      const run = pick(["dispatched", "waiting"], o.kind === "answer" ? o.pick : 0)
      if (!run) return { type: "tick" }
      const routing = run.correlationId !== undefined ? { correlationId: run.correlationId } : { eventType: typeOf(run.action).TypeId }
      return { type: "event", ...routing, data: o.data, ...(o.kind === "answer" && o.error ? { error: "station error" } : {}) }
    }
    case "stray": {
      const id = pastIds[o.pick % Math.max(1, pastIds.length)]
      return o.pick % 3 === 0 || id === undefined ? { type: "event", eventType: "t.unknown", data: {} } : { type: "event", correlationId: id, data: {} }
    }
    case "hold": {
      const run = pick(["dispatched"], o.pick)
      if (!run) return { type: "tick" }
      const action = typeOf(run.action)
      const parameters = (action.Parameters ?? {}) as Record<string, unknown>
      const command = { type: "command" as const, jobId: JOB, action: run.action, correlationId: run.correlationId!, typeId: action.TypeId, parameters, subject: SCOPE, attempt: run.attempts }
      return { type: "hold", command }
    }
    case "retry":
      return { type: "retry", ...AUDIT, action: pick(["dispatched", "waiting"], o.pick)?.action ?? "a0" }
    case "outage":
      return { type: "outage", from: now - o.length, to: now }
    case "tick":
      return { type: "tick" }
    default:
      return { type: o.kind }
  }
}

/** The batch's inputs, each resolved against the state `step` left for it; `call` is one step. */
const inputsOf = (b: Batch, state: ExecutionState, now: number, pastIds: Array<string>, call: (s: ExecutionState, i: EngineInput) => EngineOutput) => {
  const inputs: Array<EngineInput> = []
  let current = state
  for (const o of b.ops) {
    const input = resolve(o, current, now, pastIds)
    inputs.push(input)
    current = call(current, input).state
    for (const run of current.actions) if (run.correlationId !== undefined && !pastIds.includes(run.correlationId)) pastIds.push(run.correlationId)
  }
  return inputs
}

/** The waits sets kept by an output's deltas, from those `before` implies. */
const waitsAfter = (before: ExecutionState, outputs: ReadonlyArray<EngineOutput>) => {
  const waits = new Map(indexesOf(before).waits.map((w) => [w.typeId, w.since]))
  for (const out of outputs) {
    for (const w of [...out.waitsAdd, ...out.waitsMove]) waits.set(w.typeId, w.since)
    for (const t of out.waitsRemove) waits.delete(t)
  }
  return [...waits].sort()
}

/** `stepAll` against the fold of `step` over the same inputs. */
const expectFold = (before: ExecutionState, all: StepAllOutput, outputs: ReadonlyArray<EngineOutput>) => {
  const final = outputs.length > 0 ? outputs[outputs.length - 1]!.state : before
  expect(all.output.state).toStrictEqual(final)
  expect(all.output.outbox).toEqual(outputs.flatMap((o) => o.outbox))
  expect(all.output.log).toEqual(outputs.flatMap((o) => o.log))
  expect(all.output.changed).toBe(outputs.some((o) => o.changed))
  expect(all.output.needsCounters).toBeUndefined()
  expect(all.perInput).toEqual(outputs.map((o) => ({ changed: o.changed, ...(o.note !== undefined ? { note: o.note } : {}), outbox: o.outbox, log: o.log })))
  // The indexes: one write's deltas leave the waits sets where the fold's writes one by one do.
  const indexes = indexesOf(final)
  expect([all.output.due, all.output.active]).toEqual([indexes.due, indexes.active])
  expect(waitsAfter(before, [all.output])).toEqual(waitsAfter(before, outputs))
  expect(waitsAfter(before, [all.output])).toEqual(indexes.waits.map((w) => [w.typeId, w.since]).sort())
}

const json = <A>(value: A): A => JSON.parse(JSON.stringify(value)) as A

type CallOne = (s: ExecutionState, input: EngineInput, now: number, freshId: string | undefined) => EngineOutput

/**
 * Runs the batches through `stepAll` (`callAll`) and checks each against the fold of `callOne`;
 * `resolveOne` steps while the inputs are made concrete. The next batch starts from the state
 * stepAll stored (through JSON, as the runtime stores it).
 */
const runBatches = (
  r: Recipe,
  batches: ReadonlyArray<Batch>,
  logged: boolean,
  callAll: (s: ExecutionState, inputs: ReadonlyArray<EngineInput>, now: number, freshId: string | undefined) => StepAllOutput,
  callOne: CallOne,
  resolveOne: CallOne = callOne,
  started: EngineOutput = start({ jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe: r, ...(logged ? { executionId: ID } : {}) }, T0)
): ExecutionState => {
  let state = json(started.state)
  let now = T0
  const pastIds: Array<string> = []
  for (const b of batches) {
    const due = indexesOf(state).due
    now = b.toDue && due !== null ? Math.max(now + b.dt, due) : now + b.dt
    // A state stored before the log gets its id from the runtime on every touch until it has one.
    const freshId = logged ? undefined : ID
    const inputs = inputsOf(b, state, now, pastIds, (s, i) => resolveOne(s, i, now, freshId))
    const before = json(state)
    const all = callAll(state, inputs, now, freshId)
    expect(state).toStrictEqual(before) // the input state is not touched
    expectFold(before, all, foldStep(before, inputs, now, freshId, (s, i) => callOne(s, i, now, freshId)).outputs)
    state = json(all.output.state)
  }
  return state
}

// Recipes whose transitions read counters: choices by counter, a step without actions passed
// through (two evaluations in one input), loops, and a transition without counters before them.
const counterRecipes: ReadonlyArray<Recipe> = [
  recipeOf({
    Steps: [stepJson("Tighten", true), stepJson("Pack"), stepJson("Check"), stepJson("Inspect"), stepJson("Done")],
    Transitions: [
      transition("Tighten", "Pack", "ok", 0),
      transition("Tighten", "Check", "counter.nok < 2", 1),
      transition("Tighten", "Inspect", "true", 2),
      transition("Check", "Tighten", "counter.loops < 3"),
      transition("Check", "Inspect", "true", 1),
      transition("Pack", "Tighten", "counter.packed < 2 && n > 1"),
      transition("Pack", "Done", "true", 1),
      transition("Inspect", "Tighten", "ok || counter.nok >= 2")
    ],
    Actions: [push("tighten", "Tighten"), push("pack", "Pack"), pull("inspect", "Inspect"), push("done", "Done")]
  }),
  recipeOf({
    Steps: [stepJson("Check", true), stepJson("Fast"), stepJson("Slow"), stepJson("After")],
    Branches: [{ Name: "Route", Type: "selection", Branches: [["Fast"], ["Slow"]] }],
    Transitions: [
      transition("Check", "Route", "counter.queue >= 0"),
      transition("Route", "Fast", "counter.queue < 5"),
      transition("Route", "Slow", "counter.queue >= 5"),
      transition("Route", "After", "counter.loops < 100"),
      transition("After", "Check", "!ok")
    ],
    Actions: [pull("check", "Check"), push("fast", "Fast", { TimeoutSeconds: 2 }), push("slow", "Slow"), push("after", "After")]
  })
]

// What a counter source answers, read after read: mostly values, sometimes none (a counter the
// source lacks) or no source at all.
const counterValues: fc.Arbitrary<CounterValues> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ nok: fc.nat(3), loops: fc.nat(4), packed: fc.nat(3), queue: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.constant(null) }
)

/** A source that answers the k-th read with `values[k]` (cycling), whoever asks. */
const source = (values: ReadonlyArray<CounterValues>) => {
  let reads = 0
  return (_: CounterNeed): CounterValues => values[reads++ % values.length]!
}

describe("stepAll properties", () => {
  it("equals the fold of step: state, outbox, log, changed, notes and the indexes", () => {
    fc.assert(
      fc.property(recipe, fc.array(batch(withRetry), { maxLength: 8 }), fc.boolean(), (r, batches, logged) => {
        runBatches(r, batches, logged, (s, inputs, now, freshId) => stepAll(s, inputs, now, freshId), (s, input, now, freshId) => step(s, input, now, freshId))
      }),
      { numRuns: 300 }
    )
  })

  it("with counters, the runtime's loop over stepAll equals the fold of step through the same loop per input", () => {
    const answers = fc.record({ kind: fc.constant("answer" as const), pick: fc.nat(), data: resultData, error: fc.constant(false), dt: fc.constant(0) })
    const ops = fc.oneof({ weight: 3, arbitrary: answers }, { weight: 2, arbitrary: withRetry })
    let asked = 0
    fc.assert(
      fc.property(fc.constantFrom(...counterRecipes), fc.array(batch(ops), { maxLength: 8 }), fc.boolean(), fc.array(counterValues, { minLength: 1, maxLength: 8 }), (r, batches, logged, values) => {
        // Each side reads from its own source with the same answers: the same reads in the same
        // order give the same values (a read out of order would show as a different state).
        const stepping = (read: (need: CounterNeed) => CounterValues): CallOne => (s, input, now, freshId) =>
          withCounters((counters) => step(s, input, now, freshId, counters), (o) => o.needsCounters, read).result
        const all = source(values)
        const callAll = (s: ExecutionState, inputs: ReadonlyArray<EngineInput>, now: number, freshId: string | undefined) => {
          const run = withCounters((counters) => stepAll(s, inputs, now, freshId, counters), (o) => o.output.needsCounters, all)
          asked += run.needs.length
          for (const stop of run.stops) {
            expect(stop.output).toMatchObject({ state: s, changed: false, outbox: [], log: [] })
            expect(stop.perInput).toEqual(inputs.map(() => ({ changed: false, outbox: [], log: [] })))
          }
          return run.result
        }
        const started = withCounters((counters) => start({ jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe: r, ...(logged ? { executionId: ID } : {}) }, T0, counters), (o) => o.needsCounters, source(values)).result
        runBatches(r, batches, logged, callAll, stepping(source(values)), stepping(source(values)), started)
      }),
      { numRuns: 300 }
    )
    // The batches reached counter reads, so the loop was exercised.
    expect(asked).toBeGreaterThan(0)
  })

  it("v1.1.0 recipes (waiting transitions, step times, counters, time limits): the loop over stepAll equals the fold of step", () => {
    const values = fc.array(fc.record({ c: fc.nat(3) }), { minLength: 1, maxLength: 6 })
    fc.assert(
      fc.property(recipeV11, fc.array(batch(withRetry), { maxLength: 8 }), fc.boolean(), values, (r, batches, logged, answers) => {
        const stepping = (read: (need: CounterNeed) => CounterValues): CallOne => (s, input, now, freshId) =>
          withCounters((counters) => step(s, input, now, freshId, counters), (o) => o.needsCounters, read).result
        const all = source(answers)
        const callAll = (s: ExecutionState, inputs: ReadonlyArray<EngineInput>, now: number, freshId: string | undefined) =>
          withCounters((counters) => stepAll(s, inputs, now, freshId, counters), (o) => o.output.needsCounters, all).result
        const started = withCounters((counters) => start({ jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe: r, ...(logged ? { executionId: ID } : {}) }, T0, counters), (o) => o.needsCounters, source(answers)).result
        runBatches(r, batches, logged, callAll, stepping(source(answers)), stepping(source(answers)), started)
      }),
      { numRuns: 200 }
    )
  })
})
