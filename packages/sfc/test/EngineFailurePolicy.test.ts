import { describe, expect, it } from "@effect/vitest"
import { correlationIdOf, type LogWrite } from "@microdcs/sfc"
import { AUDIT, entriesOf, Job, JOB, linear, pull, push, recipeOf, stepJson, T0, transition } from "./EngineKit.js"

// Recipe schema v1.1.0: an action's Retry policy (back-off through the due index) and its OnError target.

const S = 1_000
const V11 = { SchemaVersion: "1.1.0" }

/** The correlation id of an action's attempt in the first visit of its step. */
const idOf = (action: string, attempt = 1) => correlationIdOf(JOB, action, 1, attempt)
const reply = (job: Job, action: string, attempt: number, now: number, error?: string) =>
  job.apply({ type: "event", correlationId: idOf(action, attempt), data: { ok: true }, ...(error !== undefined ? { error } : {}) }, now)
const runOf = (job: Job, action: string) => job.state.actions.find((r) => r.action === action)

describe("Retry: the back-off between attempts", () => {
  const retry = { MaxAttempts: 5, InitialIntervalSeconds: 1, BackoffCoefficient: 2, MaximumIntervalSeconds: 4 }
  const recipe = linear(["Press", "Next"], [push("press", "Press", { TimeoutSeconds: 10, Retry: retry }), push("next", "Next")], V11)

  it("waits 1 s, 2 s, 4 s, then 4 s (capped) after error replies, each attempt with its own correlation id", () => {
    const job = new Job(recipe)
    let now = T0
    const waits: Array<number> = []
    for (let attempt = 1; attempt <= 4; attempt++) {
      const failed = reply(job, "press", attempt, (now += 100), "jammed")
      expect(failed.outbox).toEqual([])
      expect(runOf(job, "press")).toMatchObject({ state: "pending", correlationId: idOf("press", attempt) })
      expect(runOf(job, "press")?.retryAttempt ?? 1).toBe(attempt)
      const due = failed.due!
      waits.push(due - now)
      // Nothing goes out a millisecond early; at the due time the next attempt does.
      expect(job.apply({ type: "tick" }, due - 1)).toMatchObject({ changed: false, outbox: [] })
      const sent = job.apply({ type: "tick" }, (now = due))
      expect(entriesOf(sent, "command")).toEqual([
        { type: "command", jobId: JOB, action: "press", correlationId: idOf("press", attempt + 1), typeId: "com.example.press", parameters: {}, subject: "line-1", attempt: 1 }
      ])
      expect(runOf(job, "press")).toMatchObject({ state: "dispatched", correlationId: idOf("press", attempt + 1), retryAttempt: attempt + 1, attempts: 1, deadline: now + 10 * S })
      expect(sent.due).toBe(now + 10 * S)
    }
    expect(waits).toEqual([1 * S, 2 * S, 4 * S, 4 * S])
    expect(new Set([1, 2, 3, 4, 5].map((n) => idOf("press", n))).size).toBe(5)
    // The fifth attempt is the last: its error fails the job as in v1.0.0.
    reply(job, "press", 5, now + 100, "jammed")
    expect(job.state).toMatchObject({ status: "failed", error: "action press failed: jammed" })
  })

  it("an operator's retry during a back-off sends the next attempt now; the back-off's end then sends nothing more", () => {
    const job = new Job(recipe)
    reply(job, "press", 1, T0 + 100, "jammed")
    expect(runOf(job, "press")).toMatchObject({ state: "pending" })
    const retried = job.apply({ type: "retry", ...AUDIT, action: "press" }, T0 + 200)
    expect(retried.note).toBeUndefined()
    expect(entriesOf(retried, "command").map((c) => c.correlationId)).toEqual([idOf("press", 2)])
    expect(runOf(job, "press")).toMatchObject({ state: "dispatched", correlationId: idOf("press", 2), retryAttempt: 2, attempts: 1, deadline: T0 + 200 + 10 * S })
    // The back-off would have ended at T0 + 1.1 s: nothing goes out then.
    expect(entriesOf(job.apply({ type: "tick" }, T0 + 1_100), "command")).toEqual([])
    expect(reply(job, "press", 2, T0 + 1_200).outbox.length).toBeGreaterThan(0)
    expect(job.activeSteps()).toEqual(["Next"])
  })

  it("a timeout ends an attempt too: back-off, the next attempt, and the last timeout fails the job", () => {
    const job = new Job(linear(["Press"], [push("press", "Press", { TimeoutSeconds: 10, Retry: { MaxAttempts: 3 } })], V11))
    const timedOut = job.apply({ type: "tick" }, T0 + 10 * S)
    expect(timedOut.outbox).toEqual([])
    // Defaults: 1 s initial interval, coefficient 2.
    expect(timedOut.due).toBe(T0 + 11 * S)
    expect(entriesOf(job.apply({ type: "tick" }, T0 + 11 * S), "command")).toMatchObject([{ correlationId: idOf("press", 2), attempt: 1 }])
    expect(job.apply({ type: "tick" }, T0 + 21 * S).due).toBe(T0 + 23 * S)
    expect(entriesOf(job.apply({ type: "tick" }, T0 + 23 * S), "command")).toMatchObject([{ correlationId: idOf("press", 3) }])
    const failed = job.apply({ type: "tick" }, T0 + 33 * S)
    expect(entriesOf(failed, "command")).toEqual([])
    expect(job.state.error).toBe("action press timed out: no reply within 10 s (attempt 3 of 3)")
  })

  it("ignores a late reply to an earlier attempt, during the back-off and after the next send", () => {
    const job = new Job(recipe)
    reply(job, "press", 1, T0 + 100, "jammed")
    expect(reply(job, "press", 1, T0 + 200)).toMatchObject({ changed: false, note: expect.stringMatching(/no action is waiting/) })
    job.apply({ type: "tick" }, T0 + 1_100)
    expect(reply(job, "press", 1, T0 + 1_200)).toMatchObject({ changed: false })
    reply(job, "press", 2, T0 + 1_300)
    expect(job.activeSteps()).toEqual(["Next"])
    expect(job.state.results).toEqual({ press: { ok: true } })
  })

  it("re-arms a pull event's wait at once on a timeout, the job keeping its place, up to MaxAttempts", () => {
    const job = new Job(linear(["Wait"], [pull("scan", "Wait", { TimeoutSeconds: 4, Retry: { MaxAttempts: 3 } })], V11))
    const rearmed = job.apply({ type: "tick" }, T0 + 4 * S)
    expect(rearmed).toMatchObject({ changed: true, outbox: [], due: T0 + 8 * S, waitsAdd: [], waitsMove: [], waitsRemove: [] })
    expect(runOf(job, "scan")).toMatchObject({ state: "waiting", waitSince: T0, retryAttempt: 2 })
    job.apply({ type: "tick" }, T0 + 8 * S)
    const failed = job.apply({ type: "tick" }, T0 + 12 * S)
    expect(failed.waitsRemove).toEqual(["com.example.scan"])
    expect(job.state.error).toBe("action scan timed out: no event within 4 s (attempt 3 of 3)")
  })

  it("keeps the back-off's time left through a pause", () => {
    const job = new Job(recipe)
    reply(job, "press", 1, T0, "jammed")
    job.apply({ type: "pause" }, T0 + 400)
    expect(runOf(job, "press")).toMatchObject({ state: "pending", remainingMs: 600 })
    expect(job.apply({ type: "resume" }, T0 + 5 * S).due).toBe(T0 + 5_600)
    expect(entriesOf(job.apply({ type: "tick" }, T0 + 5_600), "command")).toMatchObject([{ correlationId: idOf("press", 2) }])
  })
})

describe("OnError: the step is left for a target instead of failing the job", () => {
  // Triage has no actions: its transitions run at once and read the failed action's error result.
  const recipe = (tighten: Record<string, unknown>) =>
    recipeOf({
      ...V11,
      Steps: ["Tighten", "Triage", "Scrap", "Report", "Done"].map((n, i) => stepJson(n, i === 0)),
      Transitions: [
        transition("Tighten", "Done"),
        transition("Triage", "Scrap", 'tighten.errorKind == "timeout"', 0),
        transition("Triage", "Report", "tighten.error && tighten.attempts >= 2", 1)
      ],
      Actions: [push("tighten", "Tighten", { TimeoutSeconds: 5, OnError: "Triage", ...tighten }), push("check", "Tighten"), push("scrap", "Scrap"), push("report", "Report")]
    })

  it("after the last error reply: the result carries the error, the target's conditions read it", () => {
    const job = new Job(recipe({ Retry: { MaxAttempts: 2 } }))
    reply(job, "tighten", 1, T0 + 100, "jammed")
    job.apply({ type: "tick" }, T0 + 1_100)
    const out = reply(job, "tighten", 2, T0 + 1_200, "jammed again")
    expect(job.state.status).toBe("running")
    expect(job.activeSteps()).toEqual(["Report"])
    expect(job.state.results["tighten"]).toEqual({ error: "jammed again", errorKind: "error", attempts: 2 })
    // The step's other action was left open: its run is gone, and nothing of it goes out again.
    expect(runOf(job, "check")).toBeUndefined()
    expect(entriesOf(out, "command").map((c) => c.action)).toEqual(["report"])
  })

  it("after a command's last same-id resend (no Retry): the error kind is timeout, its sends the attempts", () => {
    const job = new Job(recipe({}))
    job.apply({ type: "tick" }, T0 + 5 * S)
    job.apply({ type: "tick" }, T0 + 10 * S)
    job.apply({ type: "tick" }, T0 + 15 * S)
    expect(job.activeSteps()).toEqual(["Scrap"])
    expect(job.state.results["tighten"]).toEqual({ error: "no reply after 3 sends", errorKind: "timeout", attempts: 3 })
  })

  it("goes to a selection branch whose path is chosen by the error", () => {
    const job = new Job(
      recipeOf({
        ...V11,
        Steps: ["Tighten", "Retighten", "Scrap"].map((n, i) => stepJson(n, i === 0)),
        Branches: [{ Name: "Recover", Type: "selection", Branches: [["Retighten"], ["Scrap"]] }],
        Transitions: [transition("Recover", "Retighten", 'tighten.error == "loose"'), transition("Recover", "Scrap", "true", 1)],
        Actions: [push("tighten", "Tighten", { OnError: "Recover" }), push("retighten", "Retighten"), push("scrap", "Scrap")]
      })
    )
    reply(job, "tighten", 1, T0 + 100, "loose")
    expect(job.activeSteps()).toEqual(["Retighten"])
  })

  it("an error that arrives while paused is acted on at the first tick after Resume", () => {
    const job = new Job(recipe({}))
    job.apply({ type: "pause" }, T0 + 100)
    const paused = reply(job, "tighten", 1, T0 + 200, "jammed")
    expect(paused).toMatchObject({ changed: true, outbox: [], due: null })
    expect(job.state).toMatchObject({ status: "paused" })
    expect(runOf(job, "tighten")).toMatchObject({ state: "failed", remainingMs: 0 })
    expect(job.apply({ type: "resume" }, T0 + 300).due).toBe(T0 + 300)
    job.apply({ type: "tick" }, T0 + 300)
    expect(job.state.history.map((h) => h.step)).toEqual(["Tighten", "Triage"])
    // One try, an error (not a timeout), so neither Triage transition holds: the job fails there.
    expect(job.state.error).toBe("no transition out of Triage has a condition that holds, and nothing its conditions read can change")
  })

  it("writes the move as a transition node that names the action", () => {
    const job = new Job(recipe({}), T0, { executionId: "job-1.x" })
    const out = reply(job, "tighten", 1, T0 + 100, "jammed")
    const transitions = out.log.flatMap((w: LogWrite) => (w.type === "node" && w.node.kind === "transition" ? [w.node] : []))
    expect(transitions.map((n) => [n.name, n.detail])).toEqual([["Tighten -> Triage", { onError: "tighten" }]])
  })
})

describe("recipes without a failure policy run as in v1.0.0", () => {
  it("an error reply fails the job, and the first attempt's correlation id is the visit's", () => {
    const job = new Job(linear(["Press"], [push("press", "Press")]))
    expect(job.open("press").correlationId).toBe(correlationIdOf(JOB, "press", 1))
    expect(correlationIdOf(JOB, "press", 1, 1)).toBe(correlationIdOf(JOB, "press", 1))
    reply(job, "press", 1, T0 + 100, "jammed")
    expect(job.state).toMatchObject({ status: "failed", error: "action press failed: jammed" })
    expect(job.state.results).toEqual({})
  })
})
