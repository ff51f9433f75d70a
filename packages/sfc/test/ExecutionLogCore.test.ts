import { describe, expect, it } from "@effect/vitest"
import { type LogWrite, start, step } from "@microdcs/sfc"
import { JOB, Job, linear, pull, push, SCOPE, T0 } from "./EngineKit.js"

/** The pure core's side of the execution log: ids, sequence numbers, writes. */

const ID = "job-1.1700000000000.abcd0123"

/** The node writes of an output as `{executionId}:{seq} {kind} {name}[ open]`. */
const nodes = (log: ReadonlyArray<LogWrite>) =>
  log.flatMap((w) => (w.type === "node" ? [`${w.executionId === ID ? "X" : w.executionId}:${w.node.seq} ${w.node.kind} ${w.node.name}${w.node.closedAt === undefined ? " open" : ""}`] : []))

const execs = (log: ReadonlyArray<LogWrite>) => log.flatMap((w) => (w.type === "exec" ? [w] : []))

describe("engine core: the execution log", () => {
  it("start opens the execution and the first step's nodes, numbered from 0 and kept in the state", () => {
    const job = new Job(linear(["Load", "Unload"], [push("load", "Load"), push("unload", "Unload")]), T0, { executionId: ID, recipeDigest: "d".repeat(64) })
    expect(nodes(job.last.log)).toEqual(["X:0 step Load open", "X:1 action load open"])
    expect(execs(job.last.log)).toEqual([
      { type: "exec", opened: true, record: { executionId: ID, jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipeDigest: "d".repeat(64), openedAt: T0, status: "running", lastSeq: 1 } }
    ])
    expect(job.state.log).toEqual({ executionId: ID, open: [{ executionId: ID, openedAt: T0, lastSeq: 1 }] })
    expect(job.state.active[0]?.logSeq).toBe(0)
    expect(job.state.actions[0]?.logNode).toEqual({ seq: 1, at: T0 })
  })

  it("a reply closes the action and step nodes under their numbers; the next nodes follow", () => {
    const job = new Job(linear(["Load", "Unload"], [push("load", "Load"), push("unload", "Unload")]), T0, { executionId: ID })
    const out = job.answer("load", T0 + 10, { ok: true })
    expect(nodes(out.log)).toEqual([
      "X:2 event com.example.load.reply", "X:1 action load", "X:0 step Load", "X:3 transition Load -> Unload", "X:4 step Unload open", "X:5 action unload open"
    ])
    const closed = out.log.find((w) => w.type === "node" && w.node.seq === 1)
    expect(closed?.type === "node" && closed.node).toMatchObject({ openedAt: T0, closedAt: T0 + 10, detail: { result: { ok: true }, attempts: 1 } })
    const end = job.answer("unload", T0 + 20)
    expect(nodes(end.log)).toEqual(["X:6 event com.example.unload.reply", "X:5 action unload", "X:4 step Unload"])
    expect(execs(end.log)).toEqual([{ type: "exec", opened: false, record: expect.objectContaining({ status: "completed", closedAt: T0 + 20, lastSeq: 6 }) }])
    expect(job.state.log?.open).toEqual([])
  })

  it("is deterministic: the same inputs give the same numbers on every instance", () => {
    const run = () => {
      const job = new Job(linear(["Load", "Unload"], [push("load", "Load"), push("unload", "Unload")]), T0, { executionId: ID })
      job.answer("load", T0 + 5)
      return job.outputs.flatMap((o) => o.log)
    }
    expect(run()).toEqual(run())
  })

  it("a resend rewrites the open action node with its sends; the timeout is a node; failing closes everything", () => {
    const job = new Job(linear(["Load"], [push("load", "Load", { TimeoutSeconds: 1 })]), T0, { executionId: ID })
    const resend = job.apply({ type: "tick" }, T0 + 1000)
    expect(nodes(resend.log)).toEqual(["X:2 timeout load", "X:1 action load open"])
    const rewritten = resend.log.find((w) => w.type === "node" && w.node.seq === 1)
    expect(rewritten?.type === "node" && rewritten.node.detail).toMatchObject({ attempts: 2 })
    job.apply({ type: "tick" }, T0 + 2000)
    const failed = job.apply({ type: "tick" }, T0 + 3000)
    expect(nodes(failed.log)).toEqual(["X:4 timeout load", "X:1 action load", "X:5 error failed", "X:0 step Load"])
    expect(execs(failed.log)[0]?.record).toMatchObject({ status: "failed", lastSeq: 5 })
  })

  it("pause and resume are nodes; an input that changes nothing writes nothing", () => {
    const job = new Job(linear(["Wait"], [pull("wait", "Wait")]), T0, { executionId: ID })
    expect(nodes(job.apply({ type: "pause" }, T0 + 1).log)).toEqual(["X:2 pause pause"])
    const before = job.state
    const ignored = job.apply({ type: "event", eventType: "com.example.other" }, T0 + 2)
    expect(ignored.changed).toBe(false)
    expect(ignored.log).toEqual([])
    expect(ignored.state.log).toEqual(before.log)
    expect(nodes(job.apply({ type: "resume" }, T0 + 3).log)).toEqual(["X:3 resume resume"])
  })

  it("inputs from outside name who sent them: pause, retry, stop and abort nodes (issue 21)", () => {
    const operator = { kind: "cli", id: "alice@host", comment: "tool broke" } as const
    const detailOf = (log: ReadonlyArray<LogWrite>, kind: string) => log.flatMap((w) => (w.type === "node" && w.node.kind === kind ? [w.node.detail] : []))[0]
    const waiting = new Job(linear(["Wait"], [pull("wait", "Wait")]), T0, { executionId: ID })
    expect(detailOf(waiting.apply({ type: "pause", origin: { kind: "mes", id: "urn:mes" } }, T0 + 1).log, "pause")).toEqual({ by: "mes:urn:mes" })
    expect(detailOf(waiting.apply({ type: "resume", origin: operator }, T0 + 2).log, "resume")).toEqual({ by: "cli:alice@host", comment: "tool broke" })
    const retried = waiting.apply({ type: "retry", action: "wait", origin: operator, reason: "station back" }, T0 + 3)
    expect(nodes(retried.log)).toEqual(["X:4 retry wait"])
    expect(detailOf(waiting.apply({ type: "stop", origin: operator }, T0 + 4).log, "stop")).toEqual({ by: "cli:alice@host", comment: "tool broke" })
    const aborted = new Job(linear(["Wait"], [pull("wait", "Wait")]), T0, { executionId: ID })
    const out = aborted.apply({ type: "abort", origin: { kind: "cli", id: "alice@host" } }, T0 + 1)
    expect(detailOf(out.log, "error")).toEqual({ error: "aborted by cli:alice@host", by: "cli:alice@host" })
    expect(out.state.error).toBe("aborted by cli:alice@host")
    // An input from before origins were recorded reads as it did.
    const old = new Job(linear(["Wait"], [pull("wait", "Wait")]), T0, { executionId: ID })
    expect(detailOf(old.apply({ type: "abort" }, T0 + 1).log, "error")).toEqual({ error: "aborted by the MES" })
  })

  it("a state without a log gets one on its first change when given an id, and stays without otherwise", () => {
    const recipe = linear(["Wait", "Unload"], [pull("wait", "Wait"), push("unload", "Unload")])
    const old = start({ jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe }, T0)
    expect(old.state.log).toBeUndefined()
    expect(old.log).toEqual([])
    const withoutId = step(old.state, { type: "event", eventType: "com.example.wait" }, T0 + 5)
    expect(withoutId.state.log).toBeUndefined()
    expect(withoutId.log).toEqual([])
    const touched = step(old.state, { type: "event", eventType: "com.example.wait" }, T0 + 5, ID)
    expect(nodes(touched.log)).toEqual(["X:0 event com.example.wait", "X:1 transition Wait -> Unload", "X:2 step Unload open", "X:3 action unload open"])
    expect(execs(touched.log)[0]).toMatchObject({ opened: true, record: { openedAt: T0, status: "running", lastSeq: 3 } })
    // A state that has its log keeps its id: a second id is ignored.
    const again = step(touched.state, { type: "pause" }, T0 + 6, "another-id")
    expect(again.state.log?.executionId).toBe(ID)
  })
})
