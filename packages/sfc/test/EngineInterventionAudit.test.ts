import { describe, expect, it } from "@effect/vitest"
import { type EngineInput, INTERVENTION_LIMIT, type InterventionInput, interventionRefusal, type LogWrite } from "@microdcs/sfc"
import { AUDIT, entriesOf, Job, linear, pull, push, recipeOf, stepJson, T0, transition } from "./EngineKit.js"

// Set an action's result, the audited retry, and what every intervention refuses (changing nothing).

const ID = "job-1.1700000000000.abcd0123"
const by = "cli:alice@host"

const nodeOf = (log: ReadonlyArray<LogWrite>, kind: string) => log.flatMap((w) => (w.type === "node" && w.node.kind === kind ? [w.node] : []))[0]

/** Check reads two results: a gauge (event) and a vision check (command); Pass or Fail by the gauge's value. */
const check = () =>
  recipeOf({
    Steps: ["Check", "Pass", "Fail"].map((n, i) => stepJson(n, i === 0)),
    Transitions: [transition("Check", "Pass", "gauge.mm < 5"), transition("Check", "Fail", "gauge.mm >= 5")],
    Actions: [pull("gauge", "Check"), push("vision", "Check"), push("pass", "Pass"), push("fail", "Fail")]
  })

describe("set-result", () => {
  it("completes an open action with the result, as a reply would, and the step's transitions follow it", () => {
    const job = new Job(check(), T0, { executionId: ID })
    job.answer("vision", T0 + 1, { ok: true })
    const out = job.apply({ type: "set-result", ...AUDIT, action: "gauge", result: { mm: 7 } }, T0 + 2)
    expect(job.activeSteps()).toEqual(["Fail"])
    expect(entriesOf(out, "command").map((c) => c.action)).toEqual(["fail"])
    expect(out.waitsRemove).toEqual(["com.example.gauge"])
    expect(job.state.results).toEqual({ vision: { ok: true }, gauge: { mm: 7 } })
    expect(nodeOf(out.log, "set-result")).toMatchObject({ name: "gauge", visit: 1, detail: { by, reason: "station was down", result: { mm: 7 } } })
    expect(nodeOf(out.log, "action")).toMatchObject({ name: "gauge", detail: { result: { mm: 7 } } })
    expect(job.state.interventions).toEqual([{ at: T0 + 2, intervention: "set-result", name: "gauge", by: AUDIT.origin, reason: AUDIT.reason }])
  })

  it("replaces the result of a done action of an active step; the step still waits for its open action", () => {
    const job = new Job(check(), T0, { executionId: ID })
    job.answer("gauge", T0 + 1, { mm: 9 })
    const out = job.apply({ type: "set-result", ...AUDIT, action: "gauge", result: { mm: 2 } }, T0 + 2)
    expect(out.changed).toBe(true)
    expect(nodeOf(out.log, "set-result")?.detail).toEqual({ by, reason: "station was down", result: { mm: 2 }, replaced: { mm: 9 } })
    expect(job.activeSteps()).toEqual(["Check"])
    job.answer("vision", T0 + 3)
    expect(job.activeSteps()).toEqual(["Pass"])
  })

  it("refuses an unknown action, an action whose step is not active, and no result", () => {
    const job = new Job(check())
    const refused = (input: Partial<Extract<InterventionInput, { type: "set-result" }>>) =>
      job.apply({ type: "set-result", ...AUDIT, action: "gauge", result: 1, ...input }, T0 + 1)
    expect(refused({ action: "nope" }).note).toBe("set-result refused: action nope is not in the recipe")
    expect(refused({ action: "pass" }).note).toBe("set-result refused: action pass is not in an active step (step Pass is not active; active: Check)")
    expect(refused({ result: undefined }).note).toBe("set-result refused: a result is required (null for none)")
    expect(job.state.interventions).toBeUndefined()
  })
})

describe("retry, audited", () => {
  it("names who and why in its node and in the state's interventions", () => {
    const job = new Job(linear(["Press"], [push("press", "Press")]), T0, { executionId: ID })
    const out = job.apply({ type: "retry", ...AUDIT, action: "press" }, T0 + 1)
    expect(entriesOf(out, "command")).toMatchObject([{ action: "press", attempt: 2 }])
    expect(nodeOf(out.log, "retry")?.detail).toEqual({ by, reason: "station was down", attempt: 2 })
    expect(job.state.interventions).toEqual([{ at: T0 + 1, intervention: "retry", name: "press", by: AUDIT.origin, reason: AUDIT.reason }])
  })

  it("keeps the newest interventions only", () => {
    const job = new Job(linear(["Wait"], [pull("wait", "Wait")]))
    for (let i = 0; i <= INTERVENTION_LIMIT; i++) job.apply({ type: "retry", ...AUDIT, reason: `try ${i}`, action: "wait" }, T0 + i)
    expect(job.state.interventions).toHaveLength(INTERVENTION_LIMIT)
    expect(job.state.interventions?.[0]?.reason).toBe("try 1")
  })
})

describe("refusals change nothing", () => {
  const all = (audit: object = AUDIT): ReadonlyArray<EngineInput> => [
    { type: "skip-step", ...AUDIT, ...audit, step: "Check", target: "Pass" },
    { type: "force-transition", ...AUDIT, ...audit, transition: { source: "Check", target: "Pass" } },
    { type: "set-result", ...AUDIT, ...audit, action: "gauge", result: { mm: 1 } },
    { type: "retry", ...AUDIT, ...audit, action: "gauge" }
  ]

  const unchanged = (job: Job, input: EngineInput) => {
    const before = job.state
    const out = job.apply(input, T0 + 50)
    expect(out).toMatchObject({ changed: false, outbox: [], log: [], waitsAdd: [], waitsRemove: [] })
    expect(out.state).toEqual(before)
    return out.note
  }

  it("a finished job: every intervention is refused with a typed error of kind state", () => {
    const job = new Job(check(), T0, { executionId: ID })
    job.apply({ type: "abort" }, T0 + 1)
    for (const input of all()) {
      expect(unchanged(job, input)).toMatch(/^execution is aborted/)
      const refusal = interventionRefusal(job.state, input as InterventionInput)
      expect(refusal).toMatchObject({ _tag: "InterventionRefused", intervention: input.type, kind: "state" })
      expect(refusal?.message).toBe(`${input.type} refused: the job has ended (aborted): nothing is left to intervene in`)
    }
  })

  it("a paused job: resume it first", () => {
    const job = new Job(check())
    job.apply({ type: "pause" }, T0 + 1)
    for (const input of all()) expect(unchanged(job, input)).toBe(`${input.type} refused: the job is paused: resume it first`)
  })

  it("no reason, or a bad origin: every problem listed at once, kind invalid", () => {
    const job = new Job(check())
    const input = { type: "skip-step", origin: { kind: "cli", id: " " }, reason: "  ", step: "Nowhere" } as const
    expect(unchanged(job, input)).toBe(
      "skip-step refused: the origin: the id is empty; a reason is required: say why the operator intervenes; step Nowhere is not in the recipe"
    )
    const refusal = interventionRefusal(job.state, input)!
    expect(refusal.kind).toBe("invalid")
    expect(refusal.problems.map((p) => p.kind)).toEqual(["invalid", "invalid", "unknown"])
    expect(unchanged(job, { ...input, origin: AUDIT.origin, reason: "x".repeat(501), step: "Check", target: "Pass" })).toBe(
      "skip-step refused: the reason is 501 characters long, at most 500"
    )
  })

  it("unknown names are kind unknown; an inactive step or an action that is not open kind state", () => {
    const job = new Job(check())
    job.answer("gauge", T0 + 1, { mm: 1 })
    const kindOf = (input: InterventionInput) => {
      unchanged(job, input)
      return interventionRefusal(job.state, input)?.kind
    }
    expect(kindOf({ type: "skip-step", ...AUDIT, step: "Nope" })).toBe("unknown")
    expect(kindOf({ type: "skip-step", ...AUDIT, step: "Check", target: "Nope" })).toBe("unknown")
    expect(kindOf({ type: "skip-step", ...AUDIT, step: "Pass" })).toBe("state")
    expect(kindOf({ type: "retry", ...AUDIT, action: "nope" })).toBe("unknown")
    expect(kindOf({ type: "retry", ...AUDIT, action: "gauge" })).toBe("state")
    expect(interventionRefusal(job.state, { type: "retry", ...AUDIT, action: "vision" })).toBeUndefined()
  })
})
