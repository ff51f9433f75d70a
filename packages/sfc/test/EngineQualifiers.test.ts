import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { interventionRefusal, validateRecipe } from "@microdcs/sfc"
import { entriesOf, Job, push, recipeV11, stepJson, T0, transition } from "./EngineKit.js"

// The IEC 61131-3 qualifiers of recipe schema v1.1.0 for push commands: what is sent when, what
// stops when, and how delays and limits follow Pause and the outage grace. The clock is moved by hand.

const S = 1_000
const OFF = { TypeId: "com.example.off", Parameters: { on: false } }

/** A → B → C → end, each step left when its N action (`a`, `b`, `c`, 60 s timeout) answers; `extra` adds the qualified actions. */
const flow = (...extra: ReadonlyArray<object>) =>
  recipeV11({
    Steps: [stepJson("A", true), stepJson("B"), stepJson("C")],
    Transitions: [transition("A", "B"), transition("B", "C")],
    Actions: [push("a", "A", { TimeoutSeconds: 60 }), push("b", "B", { TimeoutSeconds: 60 }), push("c", "C", { TimeoutSeconds: 60 }), ...extra]
  })

const sent = (out: Parameters<typeof entriesOf>[0]) => entriesOf(out, "command").map((c) => `${c.action}:${c.typeId}`)
const stored = (q: string, extra: object = {}) => push("heat", "A", { Qualifier: q, Stop: OFF, ...extra })
const reset = (step = "C") => push("heatOff", step, { Qualifier: "R", Resets: "heat", TypeId: OFF.TypeId })

describe("S and R", () => {
  it("S is sent on entry, does not hold its step, stays on across steps until an R sends its Stop", () => {
    const job = new Job(flow(stored("S"), reset()))
    expect(sent(job.last)).toEqual(["a:com.example.a", "heat:com.example.heat"])
    job.answer("a", T0 + S)
    expect(job.activeSteps()).toEqual(["B"])
    expect(job.state.timed).toEqual([{ action: "heat", visit: 1, phase: "on" }])
    const out = job.answer("b", T0 + 2 * S)
    const stop = entriesOf(out, "command").find((c) => c.action === "heatOff")
    expect(stop).toMatchObject({ typeId: "com.example.off", parameters: { on: false }, attempt: 1 })
    expect(job.state.timed).toBeUndefined()
    // The stop's reply completes the R action; the job then ends without any other stop.
    expect(sent(job.answer("c", T0 + 3 * S))).toEqual([])
    expect(job.state.status).toBe("completed")
  })

  it("an S reply counts for its step's conditions while the step is active; a stored command still on is stopped at the job's end", () => {
    const job = new Job(recipeV11({
      Steps: [stepJson("A", true), stepJson("B")],
      Transitions: [transition("A", "B", "heat.ok")],
      Actions: [stored("S"), push("b", "B")]
    }))
    expect(job.state.active[0]).toMatchObject({ step: "A", checkedAt: T0 })
    job.answer("heat", T0 + S, { ok: true })
    expect(job.activeSteps()).toEqual(["B"])
    const out = job.answer("b", T0 + 2 * S)
    expect(job.state.status).toBe("completed")
    expect(sent(out)).toEqual(["heat:com.example.off"])
  })

  it.each(["stop", "abort"] as const)("the MES's %s stops every stored command still on, each entry marked as a stop", (type) => {
    const job = new Job(flow(stored("S"), push("vent", "B", { Qualifier: "SL", Stop: OFF, Limit: "1h" }), reset()))
    job.answer("a", T0 + S)
    expect(job.state.timed).toHaveLength(2)
    const out = job.apply({ type }, T0 + 2 * S)
    expect(job.state.status).toBe(type === "stop" ? "stopped" : "aborted")
    expect(entriesOf(out, "command").map((c) => `${c.action}:${c.typeId}:${c.stop}`)).toEqual(["heat:com.example.off:true", "vent:com.example.off:true"])
    expect(job.state.timed).toBeUndefined()
  })

  it.each(["stop", "abort"] as const)("a stop a Pause held back goes out when the MES's %s ends the paused job", (type) => {
    const job = new Job(flow(push("lamp", "A", { Qualifier: "L", Stop: OFF, Limit: "10s" })))
    const out = job.apply({ type: "tick" }, T0 + 10 * S)
    const stop = entriesOf(out, "command").find((c) => c.stop === true)!
    expect(stop).toMatchObject({ action: "lamp", typeId: OFF.TypeId })
    job.apply({ type: "pause" }, T0 + 10 * S + 1)
    expect(job.apply({ type: "hold", command: stop }, T0 + 10 * S + 2).note).toBeUndefined()
    const ended = job.apply({ type }, T0 + 11 * S)
    expect(entriesOf(ended, "command")).toEqual([stop])
  })

  it("a step entered again sets its S anew: one entry, one stop", () => {
    const job = new Job(recipeV11({
      Steps: [stepJson("A", true), stepJson("B")],
      Transitions: [transition("A", "A", "a.again", 0), transition("A", "B", "true", 1)],
      Actions: [push("a", "A"), stored("S"), push("heatOff", "B", { Qualifier: "R", Resets: "heat", TypeId: OFF.TypeId })]
    }))
    expect(sent(job.answer("a", T0 + S, { again: true }))).toEqual(["a:com.example.a", "heat:com.example.heat"])
    expect(job.state.timed).toEqual([{ action: "heat", visit: 2, phase: "on" }])
    expect(sent(job.answer("a", T0 + 2 * S, { again: false }))).toEqual(["heatOff:com.example.off"])
    expect(job.state.timed).toBeUndefined()
  })

  it("an operator's retry is refused: the command is sent once", () => {
    const job = new Job(flow(stored("S")))
    const input = { type: "retry", action: "heat", origin: { kind: "cli", id: "alice@host" }, reason: "station was down" } as const
    expect(interventionRefusal(job.state, input)?.problems).toEqual([{ kind: "invalid", message: "action heat has qualifier S: its command is sent once, not retried" }])
  })

  it("R of a command that is not on sends nothing", () => {
    const job = new Job(flow(push("heat", "B", { Qualifier: "S", Stop: OFF }), push("heatOff", "A", { Qualifier: "R", Resets: "heat", TypeId: OFF.TypeId })))
    expect(sent(job.last)).toEqual(["a:com.example.a"])
    expect(job.state.actions.find((r) => r.action === "heatOff")).toMatchObject({ state: "completed" })
  })
})

describe("L and SL", () => {
  it("L: the Stop goes out when the Limit runs out", () => {
    const job = new Job(flow(stored("L", { Limit: "10s" })))
    expect(job.last.due).toBe(T0 + 10 * S)
    expect(job.apply({ type: "tick" }, T0 + 10 * S - 1).changed).toBe(false)
    expect(sent(job.apply({ type: "tick" }, T0 + 10 * S))).toEqual(["heat:com.example.off"])
    expect(job.state.timed).toBeUndefined()
    expect(sent(job.answer("a", T0 + 11 * S))).toEqual(["b:com.example.b"])
  })

  it("L: the Stop goes out when the step is left before the Limit", () => {
    const job = new Job(flow(stored("L", { Limit: "10s" })))
    expect(sent(job.answer("a", T0 + 3 * S))).toEqual(["heat:com.example.off", "b:com.example.b"])
    expect(job.state.timed).toBeUndefined()
    expect(job.last.due).toBe(T0 + 63 * S)
  })

  it("SL: stays on after its step, the Stop goes out when the Limit runs out", () => {
    const job = new Job(flow(stored("SL", { Limit: "30s" })))
    expect(sent(job.answer("a", T0 + S))).toEqual(["b:com.example.b"])
    expect(job.last.due).toBe(T0 + 30 * S)
    expect(sent(job.apply({ type: "tick" }, T0 + 30 * S))).toEqual(["heat:com.example.off"])
  })

  it("SL: an R before the Limit stops it once", () => {
    const job = new Job(flow(stored("SL", { Limit: "30s" }), reset("B")))
    expect(sent(job.answer("a", T0 + S))).toEqual(["b:com.example.b", "heatOff:com.example.off"])
    expect(job.state.timed).toBeUndefined()
    expect(job.last.due).toBe(T0 + 61 * S)
  })
})

describe("D, SD and DS", () => {
  const delayed = (q: string) => push("horn", "A", { Qualifier: q, Delay: "5s", ...(q === "D" ? {} : { Stop: OFF }) })

  it("D: sent when the Delay ends while its step is active; its run then waits for the reply", () => {
    const job = new Job(flow(delayed("D")))
    expect(sent(job.last)).toEqual(["a:com.example.a"])
    expect(job.last.due).toBe(T0 + 5 * S)
    expect(sent(job.apply({ type: "tick" }, T0 + 5 * S))).toEqual(["horn:com.example.horn"])
    expect(job.open("horn")).toMatchObject({ state: "dispatched", attempts: 1 })
    expect(job.state.timed).toBeUndefined()
  })

  it("D and DS: never sent when the step is left before the Delay", () => {
    for (const q of ["D", "DS"]) {
      const job = new Job(flow(delayed(q)))
      job.answer("a", T0 + S)
      expect(job.state.timed).toBeUndefined()
      expect(job.apply({ type: "tick" }, T0 + 5 * S).changed).toBe(false)
    }
  })

  it("SD: sent after the Delay even when its step was left, then stored until the job's end", () => {
    const job = new Job(flow(delayed("SD")))
    job.answer("a", T0 + S)
    expect(sent(job.apply({ type: "tick" }, T0 + 5 * S))).toEqual(["horn:com.example.horn"])
    expect(job.state.timed).toEqual([{ action: "horn", visit: 1, phase: "on" }])
    job.answer("b", T0 + 6 * S)
    expect(sent(job.answer("c", T0 + 7 * S))).toEqual(["horn:com.example.off"])
  })

  it("DS: sent after the Delay while its step is active, then stored past it", () => {
    const job = new Job(flow(delayed("DS")))
    job.apply({ type: "tick" }, T0 + 5 * S)
    job.answer("a", T0 + 6 * S)
    expect(job.state.timed).toEqual([{ action: "horn", visit: 1, phase: "on" }])
  })

  it("a Pause freezes a Delay and a Limit; Resume restarts them with what was left", () => {
    const job = new Job(flow(delayed("D"), push("lamp", "A", { Qualifier: "L", Limit: "20s", Stop: OFF })))
    job.apply({ type: "pause" }, T0 + 2 * S)
    expect(job.last.due).toBeNull()
    expect(job.state.timed).toEqual([
      { action: "horn", visit: 1, phase: "delay", leftMs: 3 * S },
      { action: "lamp", visit: 1, phase: "on", leftMs: 18 * S }
    ])
    job.apply({ type: "resume" }, T0 + 100 * S)
    expect(job.state.timed?.map((t) => t.at)).toEqual([T0 + 103 * S, T0 + 118 * S])
    expect(job.apply({ type: "tick" }, T0 + 102 * S).changed).toBe(false)
    expect(sent(job.apply({ type: "tick" }, T0 + 103 * S))).toEqual(["horn:com.example.horn"])
  })

  it("a stop whose send a Pause held back goes out on Resume", () => {
    const job = new Job(flow(stored("L", { Limit: "10s" })))
    const stop = entriesOf(job.apply({ type: "tick" }, T0 + 10 * S), "command")[0]!
    job.apply({ type: "pause" }, T0 + 11 * S)
    expect(job.apply({ type: "hold", command: stop }, T0 + 11 * S).note).toBeUndefined()
    expect(entriesOf(job.apply({ type: "resume" }, T0 + 12 * S), "command")).toEqual([stop])
  })

  it("the outage grace moves a Delay and a Limit that ran out inside the outage back by its length", () => {
    const limited = new Job(flow(stored("SL", { Limit: "6s" })))
    limited.apply({ type: "outage", from: T0 + 4 * S, to: T0 + 9 * S }, T0 + 9 * S)
    expect(limited.last.due).toBe(T0 + 11 * S)

    const job = new Job(flow(delayed("D")))
    job.apply({ type: "outage", from: T0 + 4 * S, to: T0 + 9 * S }, T0 + 9 * S)
    expect(limited.state.timed?.[0]?.at).toBe(T0 + 11 * S)
    expect(job.state.timed?.[0]?.at).toBe(T0 + 10 * S)
    expect(job.last.due).toBe(T0 + 10 * S)
  })
})

describe("P1 and P0", () => {
  it("P1 pulses on entry, P0 when the step is left", () => {
    const job = new Job(flow(push("enter", "A", { Qualifier: "P1" }), push("exit", "A", { Qualifier: "P0" })))
    expect(sent(job.last)).toEqual(["a:com.example.a", "enter:com.example.enter"])
    expect(sent(job.answer("a", T0 + S))).toEqual(["exit:com.example.exit", "b:com.example.b"])
  })
})

describe("validation of the qualifiers", () => {
  const problems = (json: object) => {
    const result = validateRecipe(json)
    return Result.isFailure(result) ? result.failure.map((p) => `${p.rule}: ${p.message}`) : []
  }
  const base = (actions: ReadonlyArray<object>, version?: string) => ({
    Steps: [stepJson("A", true)], Transitions: [], Actions: actions, ...(version ? { SchemaVersion: version } : {})
  })

  it("refuses the v1.1.0 qualifiers and their fields in a v1.0.0 recipe", () => {
    expect(problems(base([push("h", "A", { Qualifier: "S", Stop: OFF })]))).toEqual([
      'needs-v1.1: action "h": qualifier S (stored) needs recipe schema v1.1.0',
      'needs-v1.1: action "h": Stop needs recipe schema v1.1.0'
    ])
  })

  it("lists every missing, misplaced and wrong field at once", () => {
    expect(problems(base([
      push("h", "A", { Qualifier: "SL", Delay: "5s" }),
      push("r", "A", { Qualifier: "R", Resets: "h", Parameters: {} }),
      push("x", "A", { Qualifier: "R", Resets: "nope" }),
      push("p", "A", { Qualifier: "D", Interaction: "pull_event", Delay: "1s" }),
      push("q", "A", { Qualifier: "Q" })
    ], "1.1.0"))).toEqual([
      'qualifier: action "q": qualifier "Q" is not an IEC 61131-3 qualifier this engine runs; use N, P, P1, P0, S, R, L, SL, D, SD or DS (all but N and P need recipe schema v1.1.0)',
      'qualifier: action "h": qualifier SL needs Stop',
      'qualifier: action "h": qualifier SL needs Limit',
      'qualifier: action "h": Delay is for qualifier D, SD, DS, not SL',
      'qualifier: action "r": an R action sends the Stop.Parameters of "h"; it has no Parameters of its own',
      'unknown-reference: action "x": Resets "nope" is not an action',
      'qualifier: action "p": qualifier D is for push commands; a pull event takes N or P'
    ])
  })
})
