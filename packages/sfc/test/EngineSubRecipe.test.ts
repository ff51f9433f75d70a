import { describe, expect, it } from "@effect/vitest"
import { childEndInput, correlationIdOf, type SubRecipeDoneEntry, subRecipeJobId } from "@microdcs/sfc"
import { entriesOf, Job, JOB, linear, push, recipeOf, stepJson, T0, transition } from "./EngineKit.js"

// Recipe schema v1.1.0: an action with Interaction "recipe" runs another work master's recipe as a
// child execution; the parent's action completes (or fails) with the child's end.

const S = 1_000
const V11 = { SchemaVersion: "1.1.0" }
const sub = (name: string, step: string, extra: Record<string, unknown> = {}) =>
  push(name, step, { Interaction: "recipe", WorkMasterID: "wm-dose", Parameters: { volume: 5 }, TimeoutSeconds: 60, ...extra })
const CHILD = subRecipeJobId(JOB, "dose", 1)
const ID = correlationIdOf(JOB, "dose", 1)

/** Dose → Done; with `onError`, Dose's failure goes to Rework. */
const parentRecipe = (extra: Record<string, unknown> = {}) =>
  recipeOf({
    Steps: [stepJson("Dose", true), stepJson("Rework"), stepJson("Done")],
    Transitions: [transition("Dose", "Done", "dose.ok"), transition("Dose", "Rework", "dose.rework"), transition("Rework", "Done")],
    Actions: [sub("dose", "Dose", extra), push("rework", "Rework")],
    ...V11
  })

const done = (status: SubRecipeDoneEntry["status"], data: Record<string, unknown>, error?: string): SubRecipeDoneEntry => ({
  type: "subrecipe-done", jobId: CHILD, parentJobId: JOB, correlationId: ID, workMasterId: "wm-dose", status, data, ...(error !== undefined ? { error } : {})
})

describe("a sub-recipe action", () => {
  it("starts its child through the outbox and waits for it, with no command sent", () => {
    const job = new Job(parentRecipe())
    expect(entriesOf(job.last, "command")).toEqual([])
    expect(entriesOf(job.last, "subrecipe")).toEqual([
      { type: "subrecipe", jobId: JOB, action: "dose", childJobId: `${JOB}/dose/1`, correlationId: ID, rootJobId: JOB, workMasterId: "wm-dose", parameters: { volume: 5 } }
    ])
    expect(job.open("dose")).toMatchObject({ state: "dispatched", correlationId: ID, deadline: T0 + 60 * S })
    expect(job.activeSteps()).toEqual(["Dose"])
  })

  it("links the log both ways: the action node names the child's execution, the entry the node", () => {
    const job = new Job(parentRecipe(), T0, { executionId: "exec-1" })
    const node = job.last.log.find((w) => w.type === "node" && w.node.kind === "action")
    expect(node).toMatchObject({ executionId: "exec-1", node: { name: "dose", detail: { childExecutionId: "exec-1/dose/1" } } })
    const seq = node?.type === "node" ? node.node.seq : -1
    expect(entriesOf(job.last, "subrecipe")[0]).toMatchObject({ childExecutionId: "exec-1/dose/1", logParent: { executionId: "exec-1", seq } })
    const child = new Job(linear(["Fill"], [push("fill", "Fill")], V11), T0, {
      jobId: CHILD, executionId: "exec-1/dose/1", parent: { jobId: JOB, correlationId: ID, action: "dose", rootJobId: JOB, log: { executionId: "exec-1", seq } }
    })
    expect(child.last.log.find((w) => w.type === "exec")).toMatchObject({ record: { executionId: "exec-1/dose/1", jobId: CHILD, parent: { executionId: "exec-1", seq } } })
  })

  it("names the pinned digest in its entry", () => {
    const digest = "a".repeat(64)
    expect(entriesOf(new Job(parentRecipe({ Digest: digest })).last, "subrecipe")[0]).toMatchObject({ digest })
  })

  it("completes with the child's results, and the parent goes on by them", () => {
    const job = new Job(parentRecipe())
    const out = job.apply(childEndInput(done("completed", { ok: true, litres: 5 })), T0 + S)
    expect(job.state.results["dose"]).toEqual({ ok: true, litres: 5 })
    // Done has no actions: the parent completes, and its response carries the child's results.
    expect(job.state.history.map((h) => h.step)).toEqual(["Dose", "Done"])
    expect(entriesOf(out, "jobresponse")).toMatchObject([{ state: "Ended_Completed", data: { dose: { ok: true, litres: 5 } } }])
    expect(entriesOf(out, "subrecipe-end")).toEqual([])
  })

  it("fails with the child's error when the child failed: OnError applies", () => {
    const job = new Job(parentRecipe({ OnError: "Rework" }))
    job.apply(childEndInput(done("failed", {}, "valve stuck")), T0 + S)
    expect(job.state.results["dose"]).toMatchObject({ error: "sub-recipe wm-dose failed: valve stuck", errorKind: "error" })
    expect(job.activeSteps()).toEqual(["Rework"])
  })

  it("fails the job with the child's error without OnError; an aborted child likewise", () => {
    const job = new Job(parentRecipe())
    job.apply(childEndInput(done("aborted", {}, "aborted by the MES")), T0 + S)
    expect(job.state).toMatchObject({ status: "failed", error: "action dose failed: sub-recipe wm-dose aborted: aborted by the MES" })
  })

  it("tries a new child after a failed one when it has a Retry policy", () => {
    const job = new Job(parentRecipe({ Retry: { MaxAttempts: 2, InitialIntervalSeconds: 1 } }))
    job.apply(childEndInput(done("failed", {}, "valve stuck")), T0 + S)
    const next = job.apply({ type: "tick" }, T0 + 2 * S)
    expect(entriesOf(next, "subrecipe")).toMatchObject([{ childJobId: `${JOB}/dose/1.2`, correlationId: correlationIdOf(JOB, "dose", 1, 2) }])
  })

  it("aborts its child when the parent is aborted, and stops it when the parent is stopped", () => {
    const aborted = new Job(parentRecipe())
    const out = aborted.apply({ type: "abort", reason: "operator" }, T0 + S)
    expect(entriesOf(out, "subrecipe-end")).toEqual([{ type: "subrecipe-end", jobId: JOB, childJobId: CHILD, how: "abort", reason: "the parent job aborted" }])
    const stopped = new Job(parentRecipe())
    expect(entriesOf(stopped.apply({ type: "stop" }, T0 + S), "subrecipe-end")).toMatchObject([{ childJobId: CHILD, how: "stop" }])
  })

  it("pauses and resumes its waiting child with itself", () => {
    const job = new Job(parentRecipe())
    expect(entriesOf(job.apply({ type: "pause" }, T0 + S), "subrecipe-end")).toEqual([
      { type: "subrecipe-end", jobId: JOB, childJobId: CHILD, how: "pause", reason: "the parent job paused" }
    ])
    expect(entriesOf(job.apply({ type: "resume" }, T0 + 2 * S), "subrecipe-end")).toMatchObject([{ childJobId: CHILD, how: "resume" }])
    // A child that already ended gets no word.
    job.apply(childEndInput(done("completed", { ok: true })), T0 + 3 * S)
    expect(entriesOf(job.apply({ type: "pause" }, T0 + 4 * S), "subrecipe-end")).toEqual([])
  })

  it("records each child it starts, in the write that asks for it, so a removal of the job finds them", () => {
    const job = new Job(parentRecipe({ Retry: { MaxAttempts: 2, InitialIntervalSeconds: 1 } }))
    expect(job.state.children).toEqual([CHILD])
    job.apply(childEndInput(done("failed", {}, "valve stuck")), T0 + S)
    job.apply({ type: "tick" }, T0 + 2 * S)
    expect(job.state.children).toEqual([CHILD, `${JOB}/dose/1.2`])
  })

  it("aborts a child that does not end in time, and the action fails without a resend", () => {
    const job = new Job(parentRecipe())
    const out = job.apply({ type: "tick" }, T0 + 60 * S)
    expect(entriesOf(out, "subrecipe-end")).toMatchObject([{ childJobId: CHILD, how: "abort" }])
    expect(entriesOf(out, "subrecipe")).toEqual([])
    expect(job.state).toMatchObject({ status: "failed", error: "action dose timed out: sub-recipe wm-dose did not end within 60 s" })
  })
})

describe("a child execution", () => {
  const childRecipe = linear(["Fill"], [push("fill", "Fill")], V11)
  const parent = { jobId: "parent-1", correlationId: "c-1", action: "dose", rootJobId: "parent-1" }

  it("moves no job order and writes no job response: its end goes to its parent", () => {
    const job = new Job(childRecipe, T0, { jobId: CHILD, parent })
    expect(entriesOf(job.last, "joborder")).toEqual([])
    const out = job.answer("fill", T0 + S, { litres: 5 })
    expect(job.state.status).toBe("completed")
    expect(out.outbox.filter((e) => e.type === "joborder" || e.type === "jobresponse")).toEqual([])
    expect(entriesOf(out, "subrecipe-done")).toEqual([
      { type: "subrecipe-done", jobId: CHILD, parentJobId: "parent-1", correlationId: "c-1", workMasterId: "wm-1", status: "completed", data: { fill: { litres: 5 } } }
    ])
  })

  it("reports an abort with its reason", () => {
    const job = new Job(childRecipe, T0, { jobId: CHILD, parent })
    const out = job.apply({ type: "abort", reason: "the parent job aborted" }, T0 + S)
    expect(entriesOf(out, "subrecipe-done")).toMatchObject([{ status: "aborted", error: "the parent job aborted" }])
  })
})
