import { describe, expect, it } from "@effect/vitest"
import { correlationIdOf } from "@microdcs/sfc"
import { AUDIT, entriesOf, Job, JOB, linear, pull, push, T0 } from "./EngineKit.js"

// The operator's retry of an open action (admin CLI `executions retry-action`).

const S = 1_000

describe("retry of an open action", () => {
  const recipe = linear(["Press", "Next"], [push("press", "Press", { TimeoutSeconds: 10, Parameters: { p: 1 } }), push("next", "Next")])

  it("sends an open command again now, as the next attempt, with the send budget counted afresh", () => {
    const job = new Job(recipe)
    const id = correlationIdOf(JOB, "press", 1)
    job.apply({ type: "tick" }, T0 + 10 * S) // attempt 2
    job.apply({ type: "tick" }, T0 + 20 * S) // attempt 3, the last of the budget
    const retried = job.apply({ type: "retry", ...AUDIT, action: "press" }, T0 + 25 * S)
    expect(entriesOf(retried, "command")).toEqual([
      { type: "command", jobId: JOB, action: "press", correlationId: id, typeId: "com.example.press", parameters: { p: 1 }, subject: "line-1", attempt: 4 }
    ])
    expect(retried.due).toBe(T0 + 35 * S)
    // Without the retry the job would fail at T0 + 30 s; now two more sends follow before it does.
    expect(entriesOf(job.apply({ type: "tick" }, T0 + 35 * S), "command")).toMatchObject([{ attempt: 5 }])
    expect(entriesOf(job.apply({ type: "tick" }, T0 + 45 * S), "command")).toMatchObject([{ attempt: 6 }])
    job.apply({ type: "tick" }, T0 + 55 * S)
    expect(job.state.error).toBe("action press timed out: no reply after 6 sends")
  })

  it("starts a pull event's timeout over", () => {
    const job = new Job(linear(["Wait"], [pull("scan", "Wait", { TimeoutSeconds: 4 })]))
    const out = job.apply({ type: "retry", ...AUDIT, action: "scan" }, T0 + 3 * S)
    expect(out).toMatchObject({ changed: true, outbox: [], due: T0 + 7 * S })
    job.apply({ type: "tick" }, T0 + 4 * S)
    expect(job.state.status).toBe("running")
  })

  it("changes nothing, and says why, for an action that is not open, unknown, or a job that is not running", () => {
    const job = new Job(recipe)
    expect(job.apply({ type: "retry", ...AUDIT, action: "next" }, T0 + S)).toMatchObject({ changed: false, note: expect.stringMatching(/not open/) })
    expect(job.apply({ type: "retry", ...AUDIT, action: "nope" }, T0 + S)).toMatchObject({ changed: false })
    job.apply({ type: "pause" }, T0 + 2 * S)
    expect(job.apply({ type: "retry", ...AUDIT, action: "press" }, T0 + 3 * S)).toMatchObject({ changed: false, note: expect.stringMatching(/paused/) })
    job.apply({ type: "abort" }, T0 + 4 * S)
    expect(job.apply({ type: "retry", ...AUDIT, action: "press" }, T0 + 5 * S)).toMatchObject({ changed: false, outbox: [] })
  })
})
