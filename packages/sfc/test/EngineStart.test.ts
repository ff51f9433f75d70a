import { describe, expect, it } from "@effect/vitest"
import { correlationIdOf, start, step } from "@microdcs/sfc"
import { entriesOf, Job, JOB, linear, pull, push, recipeOf, SCOPE, stepJson, T0, transition, UUID } from "./EngineKit.js"

// Start, step entry, push/pull/pulse actions and the conditions that pick a transition.

const twoActions = linear(["Load", "Done"], [
  push("clamp", "Load", { TimeoutSeconds: 30, Parameters: { force: 5 } }),
  pull("scan", "Load", { TypeId: "com.example.scan", TimeoutSeconds: 12 }),
  push("unclamp", "Done")
])

describe("engine start", () => {
  it("enters the initial step, moves the job order to Running and dispatches its actions", () => {
    const out = start({ jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe: twoActions }, T0)
    const id = correlationIdOf(JOB, "clamp", 1)
    expect(out.outbox).toEqual([
      { type: "joborder", jobId: JOB, trigger: "Run" },
      { type: "command", jobId: JOB, action: "clamp", correlationId: id, typeId: "com.example.clamp", parameters: { force: 5 }, subject: SCOPE, attempt: 1 }
    ])
    expect(out.state).toMatchObject({ jobId: JOB, scope: SCOPE, workMasterId: "wm-1", status: "running", revision: 1, startedAt: T0, maxAttempts: 3 })
    expect(out.state.active).toEqual([{ step: "Load", visit: 1, enteredAt: T0 }])
    expect(out.state.visits).toEqual({ Load: 1 })
    expect(out.state.actions).toEqual([
      { action: "clamp", step: "Load", visit: 1, state: "dispatched", correlationId: id, attempts: 1, deadline: T0 + 30_000 },
      { action: "scan", step: "Load", visit: 1, state: "waiting", attempts: 0, waitSince: T0, deadline: T0 + 12_000 }
    ])
    expect(out.due).toBe(T0 + 12_000)
    expect(out.waitsAdd).toEqual([{ typeId: "com.example.scan", since: T0 }])
    expect(out.waitsRemove).toEqual([])
    expect(out.active).toBe(true)
    expect(out.changed).toBe(true)
  })

  it("takes maxAttempts from the start parameters and keeps a snapshot of the recipe", () => {
    const out = start({ jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe: twoActions, maxAttempts: 5 }, T0)
    expect(out.state.maxAttempts).toBe(5)
    expect(out.state.recipe).toEqual(twoActions)
  })

  it("derives correlation ids deterministically from job, action and visit, as version 5 UUIDs", () => {
    const id = correlationIdOf(JOB, "clamp", 1)
    expect(id).toMatch(UUID)
    expect(correlationIdOf(JOB, "clamp", 1)).toBe(id)
    const others = [correlationIdOf(JOB, "clamp", 2), correlationIdOf("job-2", "clamp", 1), correlationIdOf(JOB, "clamp2", 1)]
    for (const other of others) expect(other).not.toBe(id)
    // Lengths are part of the hashed text, so a separator inside a name cannot make two ids equal.
    expect(correlationIdOf("a:b", "c", 1)).not.toBe(correlationIdOf("a", "b:c", 1))
  })
})

describe("engine actions", () => {
  it("advances a step only when every N action of the visit completed", () => {
    const job = new Job(twoActions)
    const first = job.answer("clamp", T0 + 100, { clamped: true })
    expect(first.changed).toBe(true)
    expect(first.outbox).toEqual([])
    expect(job.activeSteps()).toEqual(["Load"])
    expect(job.state.actions[0]).toEqual({
      action: "clamp", step: "Load", visit: 1, state: "completed", correlationId: correlationIdOf(JOB, "clamp", 1), attempts: 1, result: { clamped: true }
    })
    expect(first.due).toBe(T0 + 12_000)

    const second = job.answer("scan", T0 + 200, { code: "A7" })
    expect(second.waitsRemove).toEqual(["com.example.scan"])
    expect(job.activeSteps()).toEqual(["Done"])
    expect(job.state.results).toEqual({ clamp: { clamped: true }, scan: { code: "A7" } })
    expect(entriesOf(second, "command").map((c) => c.correlationId)).toEqual([correlationIdOf(JOB, "unclamp", 1)])
    expect(second.due).toBe(T0 + 200 + 10_000)
    expect(job.state.history).toEqual([
      { step: "Load", visit: 1, enteredAt: T0, leftAt: T0 + 200 },
      { step: "Done", visit: 1, enteredAt: T0 + 200 }
    ])
    expect(second.state.revision).toBe(first.state.revision + 1)
  })

  it("routes an event without correlation id to the longest waiting action of its type", () => {
    const recipe = linear(["Wait"], [pull("first", "Wait", { TypeId: "t.same" }), pull("second", "Wait", { TypeId: "t.same" })])
    const job = new Job(recipe)
    expect(job.last.waitsAdd).toEqual([{ typeId: "t.same", since: T0 }])
    const out = job.apply({ type: "event", eventType: "t.same", data: { n: 1 } }, T0 + 1)
    expect(out.waitsRemove).toEqual([]) // "second" still waits for the type
    expect(job.state.actions.map((r) => r.state)).toEqual(["completed", "waiting"])
    const done = job.apply({ type: "event", eventType: "t.same", data: { n: 2 } }, T0 + 2)
    expect(done.waitsRemove).toEqual(["t.same"])
    expect(job.state.status).toBe("completed")
  })

  it("a wait for a type that ends and restarts in one write moves the job's wait start to the new wait", () => {
    const recipe = linear(["First", "Second"], [pull("first", "First", { TypeId: "t.same" }), pull("second", "Second", { TypeId: "t.same" })])
    const job = new Job(recipe)
    expect(job.last).toMatchObject({ waitsAdd: [{ typeId: "t.same", since: T0 }], waitsMove: [] })
    const out = job.apply({ type: "event", eventType: "t.same", data: {} }, T0 + 50)
    // Still waiting for the type, but since now: jobs that waited since before now come first.
    expect(out).toMatchObject({ waitsAdd: [], waitsMove: [{ typeId: "t.same", since: T0 + 50 }], waitsRemove: [] })
    const done = job.apply({ type: "event", eventType: "t.same", data: {} }, T0 + 60)
    expect(done).toMatchObject({ waitsAdd: [], waitsMove: [], waitsRemove: ["t.same"] })
  })

  it("dispatches pulses on entry without waiting for them, and has no deadline for them", () => {
    const recipe = linear(["Signal", "Work", "End"], [
      push("lamp", "Signal", { Qualifier: "P" }),
      push("beep", "Work", { Qualifier: "P" }),
      pull("done", "Work", { TimeoutSeconds: 5 }),
      pull("watch", "End", { Qualifier: "P" }),
      push("finish", "End")
    ])
    const job = new Job(recipe)
    // "Signal" holds only a pulse: it is left at once and "Work" is entered in the same write.
    expect(entriesOf(job.last, "command").map((c) => c.action)).toEqual(["lamp", "beep"])
    expect(job.activeSteps()).toEqual(["Work"])
    const beep = job.open("beep")
    expect(beep.deadline).toBeUndefined()
    expect(job.last.due).toBe(T0 + 5_000)

    // A pulse's reply is recorded while its step is active, and moves nothing.
    const reply = job.answer("beep", T0 + 10, { ok: 1 })
    expect(job.state.results).toEqual({ beep: { ok: 1 } })
    expect(job.activeSteps()).toEqual(["Work"])
    expect(reply.outbox).toEqual([])

    job.answer("done", T0 + 20)
    expect(job.activeSteps()).toEqual(["End"])
    // A pull pulse waits (the job joins the waits set) but has no deadline and does not hold the step.
    expect(job.open("watch")).toMatchObject({ state: "waiting", waitSince: T0 + 20 })
    expect(job.open("watch").deadline).toBeUndefined()
    expect(job.last.waitsAdd).toEqual([{ typeId: "com.example.watch", since: T0 + 20 }])
    job.answer("finish", T0 + 30)
    expect(job.state.status).toBe("completed")
    expect(job.last.waitsRemove).toEqual(["com.example.watch"])
  })

  it("ignores the reply to a pulse whose step was left", () => {
    const recipe = linear(["Signal", "Work"], [push("lamp", "Signal", { Qualifier: "P" }), push("work", "Work")])
    const job = new Job(recipe)
    const before = job.state
    const out = job.apply({ type: "event", correlationId: correlationIdOf(JOB, "lamp", 1), data: {} }, T0 + 1)
    expect(out).toMatchObject({ changed: false, outbox: [], waitsAdd: [], waitsRemove: [] })
    expect(out.note).toContain(correlationIdOf(JOB, "lamp", 1))
    expect(out.state).toEqual(before)
  })
})

describe("engine conditions", () => {
  // Two actions both report `ok`; a bare name reads the later one in recipe order, whatever the
  // order of the replies. Priorities decide among conditions that hold, ties in recipe order.
  const recipe = recipeOf({
    Steps: [stepJson("Check", true), stepJson("ByBare"), stepJson("ByAction"), stepJson("Fallback"), stepJson("Tie")],
    Transitions: [
      transition("Check", "Fallback", "true", 5),
      transition("Check", "ByAction", "first.ok && n == 2", 1),
      transition("Check", "ByBare", "ok", 0),
      transition("Check", "Tie", "true", 5)
    ],
    Actions: [push("first", "Check"), push("second", "Check")]
  })

  const run = (firstResult: object, secondResult: object): string => {
    const job = new Job(recipe)
    job.answer("second", T0 + 1, secondResult)
    job.answer("first", T0 + 2, firstResult)
    expect(job.state.status).toBe("completed")
    return job.state.history.map((h) => h.step).join(">")
  }

  it("reads a bare name from the latest result in recipe order", () => {
    expect(run({ ok: false }, { ok: true })).toBe("Check>ByBare")
    expect(run({ ok: true, n: 2 }, { ok: false })).toBe("Check>ByAction")
  })

  it("reads action.field from that action only, and takes the lowest priority, ties in recipe order", () => {
    expect(run({ ok: true, n: 3 }, { ok: false, n: 2 })).toBe("Check>ByAction") // n: the second's 2
    expect(run({ ok: false, n: 2 }, { ok: false })).toBe("Check>Fallback") // first.ok false; the tie goes to Fallback
    expect(run({ n: 2 }, { ok: false })).toBe("Check>Fallback") // first.ok unknown: false
  })

  it("evaluates only the results of the source step's current visit", () => {
    // "flag" was true in the first step; the second step's transition reads its own visit only.
    const twoSteps = recipeOf({
      Steps: [stepJson("A", true), stepJson("B"), stepJson("Yes"), stepJson("No")],
      Transitions: [transition("A", "B"), transition("B", "Yes", "flag"), transition("B", "No", "!flag")],
      Actions: [push("a", "A"), push("b", "B")]
    })
    const job = new Job(twoSteps)
    job.answer("a", T0 + 1, { flag: true })
    job.answer("b", T0 + 2, { other: 1 })
    expect(job.state.history.map((h) => h.step)).toEqual(["A", "B", "No"])
  })

  it("does not change its input state", () => {
    const job = new Job(twoActions)
    const frozen = JSON.stringify(job.state)
    step(job.state, { type: "event", correlationId: job.open("clamp").correlationId!, data: {} }, T0 + 1)
    step(job.state, { type: "abort" }, T0 + 1)
    expect(JSON.stringify(job.state)).toBe(frozen)
  })
})
