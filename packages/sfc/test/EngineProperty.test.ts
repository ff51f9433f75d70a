import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  correlationIdOf,
  type EngineInput,
  type EngineOutput,
  type ExecutionState,
  isTerminalStatus,
  type Recipe,
  start,
  step
} from "@microdcs/sfc"
import { type Clock, type Op, op, recipe, resolveOp, resultData } from "./EngineArbitraries.js"
import { entriesOf, JOB, SCOPE, T0 } from "./EngineKit.js"

// Random valid recipes driven by random input sequences; the invariants hold after every call.

/** Everything the invariants remember across one sequence. */
class Observer {
  readonly waits = new Map<string, number>() // type → wait start, as the waits sets hold it
  readonly idOf = new Map<string, string>() // "action#visit" → correlation id
  readonly keyOf = new Map<string, string>() // correlation id → "action#visit"
  readonly sends = new Map<string, number>() // correlation id → sends so far
  responses = 0

  constructor(readonly recipe: Recipe) {}

  check(before: ExecutionState | undefined, input: EngineInput | undefined, out: EngineOutput, now: number): void {
    const { state } = out
    const terminal = isTerminalStatus(state.status)
    expect(JSON.parse(JSON.stringify(state))).toStrictEqual(state) // stored as JSON, as is

    if (before && isTerminalStatus(before.status)) {
      expect(out.changed).toBe(false)
      expect(out.outbox).toEqual([])
      expect(state).toEqual(before)
    }
    if (before) {
      expect(state.revision).toBe(out.changed ? before.revision + 1 : before.revision)
      if (!out.changed) expect(out.outbox).toEqual([])
    }
    expect(out.active).toBe(!terminal)

    // A job always has a way forward: running means an open N action with a deadline in every
    // active step; paused means no deadline at all.
    const open = state.actions.filter((r) => r.state === "dispatched" || r.state === "waiting")
    const deadlines = open.flatMap((r) => (r.deadline !== undefined ? [r.deadline] : []))
    if (state.status === "running") {
      expect(state.active.length).toBeGreaterThan(0)
      for (const a of state.active) {
        const held = open.some((r) => r.step === a.step && r.visit === a.visit && this.qualifier(r.action) === "N" && r.deadline !== undefined)
        expect(held, `active step ${a.step} has no way forward`).toBe(true)
      }
      expect(out.due).toBe(Math.min(...deadlines))
    } else {
      expect(out.due).toBeNull()
      expect(deadlines).toEqual([])
    }
    if (terminal) expect([state.active, state.actions, state.branches]).toEqual([[], [], []])
    // Only a paused job holds commands back, each send at most once.
    if (state.heldCommands !== undefined) {
      expect(state.status).toBe("paused")
      expect(new Set(state.heldCommands.map((c) => `${c.correlationId}.${c.attempt}`)).size).toBe(state.heldCommands.length)
    }

    // Waits: the runtime's sets, kept by the deltas, hold each type waiting actions have, with
    // the start of its longest open wait (the order in which waiting jobs get events).
    for (const w of out.waitsAdd) {
      expect(this.waits.has(w.typeId)).toBe(false)
      this.waits.set(w.typeId, w.since)
    }
    for (const w of out.waitsMove) {
      expect(this.waits.has(w.typeId)).toBe(true)
      this.waits.set(w.typeId, w.since)
    }
    for (const t of out.waitsRemove) {
      expect(this.waits.has(t)).toBe(true)
      this.waits.delete(t)
    }
    const waiting = new Map<string, number>()
    for (const r of terminal ? [] : state.actions.filter((r) => r.state === "waiting")) {
      const typeId = this.typeOf(r.action)
      waiting.set(typeId, Math.min(waiting.get(typeId) ?? Infinity, r.waitSince!))
    }
    expect([...this.waits].sort()).toEqual([...waiting].sort())

    this.checkOutbox(before, input, out)
    if (before && input) this.checkClock(before, input, state, now)
  }

  /** Outage, pause and resume move deadlines exactly so (an outage shifts those inside it by its length, a pause keeps the time left, a resume restarts it), and nothing else. */
  private checkClock(before: ExecutionState, input: EngineInput, state: ExecutionState, now: number): void {
    if (isTerminalStatus(before.status)) return
    if (input.type === "outage") {
      const moved = (d: number | undefined) => (d !== undefined && d > input.from && d <= input.to ? d + input.to - input.from : d)
      expect(state.actions.map((r) => r.deadline)).toEqual(before.actions.map((r) => moved(r.deadline)))
    }
    if (input.type === "pause" && before.status === "running") {
      expect(state.actions.map((r) => r.remainingMs)).toEqual(before.actions.map((r) => (r.deadline === undefined ? undefined : Math.max(0, r.deadline - now))))
    }
    if (input.type === "resume" && before.status === "paused") {
      for (const run of state.actions) {
        const frozen = before.actions.find((r) => r.action === run.action && r.visit === run.visit)
        if (frozen?.remainingMs !== undefined) expect(run.deadline).toBe(now + frozen.remainingMs)
      }
    }
  }

  private checkOutbox(before: ExecutionState | undefined, input: EngineInput | undefined, out: EngineOutput): void {
    const { state } = out
    const responses = entriesOf(out, "jobresponse")
    this.responses += responses.length
    expect(this.responses).toBeLessThanOrEqual(1)
    const finished = isTerminalStatus(state.status) && (before === undefined || !isTerminalStatus(before.status))
    expect(responses.length).toBe(finished ? 1 : 0)
    const triggers = entriesOf(out, "joborder").map((e) => e.trigger)
    const end = finished && state.status === "completed" ? ["Complete"] : finished && state.status === "failed" ? ["Abort"] : []
    expect(triggers).toEqual([...(before === undefined ? ["Run"] : []), ...end])

    const all = entriesOf(out, "command")
    const quiet = before?.status === "paused" && input?.type !== "resume"
    if (quiet || input?.type === "stop" || input?.type === "abort" || input?.type === "hold") expect(all).toEqual([])
    // Resume sends what the pause held back again, exactly as it was (not a new send).
    const held = input?.type === "resume" ? (before?.heldCommands ?? []) : []
    const resent = all.filter((c) => held.some((h) => h.correlationId === c.correlationId && h.attempt === c.attempt))
    for (const c of resent) expect(held).toContainEqual(c)
    const commands = all.filter((c) => !resent.includes(c))
    for (const c of commands) {
      const action = this.recipe.Actions.find((a) => a.Name === c.action)!
      // No call enters a step twice, so the step's visit after the call is the command's visit.
      const visit = state.visits[action.Step]!
      const key = `${c.action}#${visit}`
      expect(c.correlationId).toBe(correlationIdOf(JOB, c.action, visit))
      expect(this.idOf.get(key) ?? c.correlationId).toBe(c.correlationId)
      expect(this.keyOf.get(c.correlationId) ?? key).toBe(key)
      this.idOf.set(key, c.correlationId)
      this.keyOf.set(c.correlationId, key)
      const sends = (this.sends.get(c.correlationId) ?? 0) + 1
      this.sends.set(c.correlationId, sends)
      expect(c.attempt).toBe(sends)
      expect(sends).toBeLessThanOrEqual(state.maxAttempts)
      expect(c).toMatchObject({ jobId: JOB, typeId: action.TypeId, subject: SCOPE, parameters: action.Parameters ?? {} })
    }
  }

  private typeOf(action: string): string {
    return this.recipe.Actions.find((a) => a.Name === action)!.TypeId
  }

  private qualifier(action: string): string {
    return this.recipe.Actions.find((a) => a.Name === action)!.Qualifier
  }
}

const runSequence = (r: Recipe, ops: ReadonlyArray<Op>, maxAttempts: number): { state: ExecutionState; observer: Observer } => {
  const observer = new Observer(r)
  const clock: Clock = { now: T0 }
  let out = start({ jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe: r, maxAttempts }, clock.now)
  observer.check(undefined, undefined, out, clock.now)
  for (const o of ops) {
    const before = JSON.parse(JSON.stringify(out.state)) as ExecutionState
    const input = resolveOp(o, before, out.due, [...observer.keyOf.keys()], clock)
    out = step(before, input, clock.now)
    observer.check(before, input, out, clock.now)
  }
  return { state: out.state, observer }
}

describe("engine properties", () => {
  it("keeps every invariant over random recipes and random input sequences", () => {
    const statuses = new Map<string, number>()
    fc.assert(
      fc.property(recipe, fc.array(op, { maxLength: 40 }), fc.integer({ min: 1, max: 4 }), (r, ops, maxAttempts) => {
        const end = runSequence(r, ops, maxAttempts).state
        statuses.set(end.status, (statuses.get(end.status) ?? 0) + 1)
      }),
      { numRuns: 400 }
    )
    // The generators reach every ending, so the invariants were checked on all of them.
    for (const status of ["running", "paused", "completed", "failed", "aborted", "stopped"]) {
      expect(statuses.get(status) ?? 0, `no run ended ${status}`).toBeGreaterThan(0)
    }
  })

  it("never times out an action of a station that answers promptly; a job only fails on its recipe", () => {
    const prompt = resultData.map((data): ReadonlyArray<Op> => [{ kind: "prompt", data, dt: 50 }, { kind: "tick", dt: 0, toDue: false }])
    fc.assert(
      fc.property(recipe, fc.array(prompt, { maxLength: 30 }), (r, rounds) => {
        const { state, observer } = runSequence(r, rounds.flat(), 3)
        expect([...observer.sends.values()].every((sends) => sends === 1)).toBe(true)
        if (state.status === "failed") expect(state.error).toMatch(/^(no transition out of|no path of selection branch|the recipe loops through step)/)
        else expect(["running", "completed"]).toContain(state.status)
      }),
      { numRuns: 200 }
    )
  })
})
