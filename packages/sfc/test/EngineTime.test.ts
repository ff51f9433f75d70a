import { describe, expect, it } from "@effect/vitest"
import { correlationIdOf } from "@microdcs/sfc"
import { entriesOf, Job, JOB, linear, pull, push, T0 } from "./EngineKit.js"

// Deadlines: resends, timeouts, pause and resume, outage grace.

const S = 1_000

describe("timeouts", () => {
  const recipe = linear(["Press", "Next"], [push("press", "Press", { TimeoutSeconds: 10, Parameters: { p: 1 } }), push("next", "Next")])

  it("resends a push command with the same correlation id until it was sent maxAttempts times, then fails the job", () => {
    const job = new Job(recipe)
    const id = correlationIdOf(JOB, "press", 1)
    const early = job.apply({ type: "tick" }, T0 + 10 * S - 1)
    expect(early).toMatchObject({ changed: false, outbox: [], due: T0 + 10 * S })

    const second = job.apply({ type: "tick" }, T0 + 10 * S)
    expect(second.outbox).toEqual([
      { type: "command", jobId: JOB, action: "press", correlationId: id, typeId: "com.example.press", parameters: { p: 1 }, subject: "line-1", attempt: 2 }
    ])
    expect(job.open("press")).toMatchObject({ attempts: 2, deadline: T0 + 20 * S, correlationId: id })
    expect(second.due).toBe(T0 + 20 * S)

    // A late sweep: the new deadline counts from the resend, not from the old deadline.
    const third = job.apply({ type: "tick" }, T0 + 25 * S)
    expect(entriesOf(third, "command")).toMatchObject([{ correlationId: id, attempt: 3 }])
    expect(third.due).toBe(T0 + 35 * S)

    const failed = job.apply({ type: "tick" }, T0 + 35 * S)
    const error = "action press timed out: no reply after 3 sends"
    expect(failed.outbox).toEqual([
      { type: "joborder", jobId: JOB, trigger: "Abort", reason: error },
      { type: "jobresponse", jobId: JOB, responseId: `${JOB}-response`, state: "Aborted", startTime: T0, endTime: T0 + 35 * S, data: {}, error }
    ])
    expect(failed.state).toMatchObject({ status: "failed", error, endedAt: T0 + 35 * S, actions: [], active: [] })
    expect(failed).toMatchObject({ due: null, active: false })
  })

  it("honours maxAttempts from the start parameters", () => {
    const job = new Job(recipe, T0, { maxAttempts: 1 })
    const out = job.apply({ type: "tick" }, T0 + 10 * S)
    expect(entriesOf(out, "command")).toEqual([])
    expect(job.state.error).toBe("action press timed out: no reply after 1 sends")
  })

  it("still accepts the reply to an earlier send of the same visit", () => {
    const job = new Job(recipe)
    job.apply({ type: "tick" }, T0 + 10 * S)
    job.apply({ type: "event", correlationId: correlationIdOf(JOB, "press", 1), data: { late: true } }, T0 + 11 * S)
    expect(job.activeSteps()).toEqual(["Next"])
    expect(job.state.results).toEqual({ press: { late: true } })
  })

  it("fails a pull event past its deadline, and leaves the waits set", () => {
    const job = new Job(linear(["Wait"], [pull("scan", "Wait", { TimeoutSeconds: 4 })]))
    const out = job.apply({ type: "tick" }, T0 + 4 * S)
    expect(job.state.error).toBe("action scan timed out: no event within 4 s")
    expect(out.waitsRemove).toEqual(["com.example.scan"])
    expect(entriesOf(out, "jobresponse")).toHaveLength(1)
  })

  it("resends nothing in a sweep that fails the job (regression: a resend went out with the failure)", () => {
    // "slow" (first in the step) is due for a resend in the same sweep in which "scan" times out.
    const job = new Job(linear(["Both"], [push("slow", "Both", { TimeoutSeconds: 5 }), pull("scan", "Both", { TimeoutSeconds: 6 })]))
    const out = job.apply({ type: "tick" }, T0 + 6 * S)
    expect(entriesOf(out, "command")).toEqual([])
    expect(job.state.error).toBe("action scan timed out: no event within 6 s")
  })
})

describe("pause and resume", () => {
  const recipe = linear(["Work", "Then"], [push("work", "Work", { TimeoutSeconds: 10 }), pull("scan", "Work", { TimeoutSeconds: 30 }), push("then", "Then")])

  it("freezes the remaining time of open deadlines and restores it on resume", () => {
    const job = new Job(recipe)
    const paused = job.apply({ type: "pause" }, T0 + 4 * S)
    expect(paused).toMatchObject({ changed: true, outbox: [], due: null, active: true, waitsAdd: [], waitsRemove: [] })
    expect(job.state).toMatchObject({ status: "paused", pausedAt: T0 + 4 * S })
    expect(job.state.actions.map((r) => [r.deadline, r.remainingMs])).toEqual([[undefined, 6 * S], [undefined, 26 * S]])

    // A sweep long after the old deadlines fires nothing while paused.
    expect(job.apply({ type: "tick" }, T0 + 100 * S)).toMatchObject({ changed: false, outbox: [] })
    expect(job.apply({ type: "pause" }, T0 + 100 * S).changed).toBe(false)

    const resumed = job.apply({ type: "resume" }, T0 + 200 * S)
    expect(resumed).toMatchObject({ changed: true, outbox: [], due: T0 + 206 * S })
    expect(job.state.actions.map((r) => [r.deadline, r.remainingMs])).toEqual([[T0 + 206 * S, undefined], [T0 + 226 * S, undefined]])
    expect(job.state.status).toBe("running")
    expect(job.state.pausedAt).toBeUndefined()
    expect(job.apply({ type: "resume" }, T0 + 201 * S).changed).toBe(false)
  })

  it("completes actions from events while paused but dispatches nothing new until resume", () => {
    const job = new Job(recipe)
    job.apply({ type: "pause" }, T0 + S)
    const first = job.answer("work", T0 + 2 * S, { w: 1 })
    const second = job.answer("scan", T0 + 3 * S, { s: 2 })
    for (const out of [first, second]) expect(out).toMatchObject({ changed: true, outbox: [], due: null })
    expect(second.waitsRemove).toEqual(["com.example.scan"])
    expect(job.activeSteps()).toEqual(["Work"]) // done, but not advanced while paused
    expect(job.state.results).toEqual({ work: { w: 1 }, scan: { s: 2 } })

    const resumed = job.apply({ type: "resume" }, T0 + 50 * S)
    expect(job.activeSteps()).toEqual(["Then"])
    expect(entriesOf(resumed, "command").map((c) => c.action)).toEqual(["then"])
    expect(resumed.due).toBe(T0 + 60 * S)
  })

  it("keeps a deadline that had passed before the pause as due at once on resume", () => {
    const job = new Job(recipe)
    job.apply({ type: "pause" }, T0 + 12 * S)
    expect(job.state.actions[0]!.remainingMs).toBe(0)
    expect(job.apply({ type: "resume" }, T0 + 20 * S).due).toBe(T0 + 20 * S)
    expect(job.apply({ type: "tick" }, T0 + 20 * S).outbox).toMatchObject([{ type: "command", attempt: 2 }])
  })

  it("sends on resume exactly the commands a pause held back, with their correlation id and attempt", () => {
    const job = new Job(linear(["Work"], [push("held", "Work"), push("sent", "Work"), push("lamp", "Work", { Qualifier: "P" })]))
    const [held, sent, lamp] = entriesOf(job.last, "command")
    job.apply({ type: "pause" }, T0 + S)
    // The handler holds back what it did not send; "sent" went out before the pause.
    expect(job.apply({ type: "hold", command: held! }, T0 + S)).toMatchObject({ changed: true, outbox: [] })
    expect(job.apply({ type: "hold", command: lamp! }, T0 + S).changed).toBe(true)
    // A redelivered entry is held once.
    expect(job.apply({ type: "hold", command: held! }, T0 + S)).toMatchObject({ changed: false, note: expect.stringContaining("already held") })
    expect(job.state.heldCommands).toEqual([held, lamp])

    const resumed = job.apply({ type: "resume" }, T0 + 5 * S)
    expect(entriesOf(resumed, "command")).toEqual([held, lamp])
    expect(entriesOf(resumed, "command").map((c) => c.correlationId)).not.toContain(sent!.correlationId)
    expect(job.state.heldCommands).toBeUndefined()
    // Nothing is held for a later resume, and a second resume sends nothing.
    job.apply({ type: "pause" }, T0 + 6 * S)
    expect(job.apply({ type: "resume" }, T0 + 7 * S).outbox).toEqual([])
  })

  it("holds back nothing for a running job, a stale attempt or another job; a stop forgets what was held", () => {
    const job = new Job(recipe)
    const first = entriesOf(job.last, "command")[0]!
    expect(job.apply({ type: "hold", command: first }, T0 + S)).toMatchObject({ changed: false, note: expect.stringContaining("not paused") })
    job.apply({ type: "tick" }, T0 + 10 * S) // attempt 2 goes out
    job.apply({ type: "pause" }, T0 + 11 * S)
    expect(job.apply({ type: "hold", command: first }, T0 + 11 * S)).toMatchObject({ changed: false, note: expect.stringContaining("no action waits") })
    expect(job.apply({ type: "hold", command: { ...first, attempt: 2, jobId: "other" } }, T0 + 11 * S).changed).toBe(false)
    expect(job.apply({ type: "hold", command: { ...first, attempt: 2 } }, T0 + 11 * S).changed).toBe(true)
    const stopped = job.apply({ type: "stop" }, T0 + 12 * S)
    expect(entriesOf(stopped, "command")).toEqual([])
    expect(job.state.heldCommands).toBeUndefined()
  })

  it("fails the job when an event with an error arrives while paused", () => {
    const job = new Job(recipe)
    job.apply({ type: "pause" }, T0 + S)
    const out = job.answer("work", T0 + 2 * S, undefined, "jammed")
    expect(job.state).toMatchObject({ status: "failed", error: "action work failed: jammed" })
    expect(job.state.pausedAt).toBeUndefined()
    expect(out.outbox.map((e) => e.type)).toEqual(["joborder", "jobresponse"])
  })
})

describe("outage grace", () => {
  const recipe = linear(["Work"], [
    push("a", "Work", { TimeoutSeconds: 10 }),
    push("b", "Work", { TimeoutSeconds: 20 }),
    push("c", "Work", { TimeoutSeconds: 30 }),
    push("d", "Work", { TimeoutSeconds: 40 })
  ])

  it("moves the deadlines that fell inside (from, to] back by the outage's length", () => {
    const job = new Job(recipe)
    const out = job.apply({ type: "outage", from: T0 + 10 * S, to: T0 + 30 * S }, T0 + 30 * S)
    // a (= from) stays; b and c (inside, c = to) move by 20 s; d (after) stays.
    expect(job.state.actions.map((r) => r.deadline)).toEqual([T0 + 10 * S, T0 + 40 * S, T0 + 50 * S, T0 + 40 * S])
    expect(out).toMatchObject({ changed: true, outbox: [], due: T0 + 10 * S })
  })

  it("changes nothing when no deadline fell inside, or the outage is empty", () => {
    const job = new Job(recipe)
    expect(job.apply({ type: "outage", from: T0 + 41 * S, to: T0 + 50 * S }, T0 + 50 * S).changed).toBe(false)
    expect(job.apply({ type: "outage", from: T0 + 20 * S, to: T0 + 20 * S }, T0 + 50 * S).changed).toBe(false)
  })
})
