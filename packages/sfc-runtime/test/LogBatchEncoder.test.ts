import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import { decodeExecution, decodeNode } from "@microdcs/store"
import type { LogNode, LogWrite } from "@microdcs/sfc"
import { LogBatchEncoder } from "../src/LogBatchEncoder.js"
import { LogWriteQueue } from "../src/LogWriteQueue.js"

/** The writer's pieces without a server: the queue between the CAS path and its fiber, and a batch's encoding. */

const ID = "job-1.1700000000000.abcd0123"
const PREFIX = `p:dag:log:${ID}:`
const execKeyOf = (executionId: string): string | KeyPartError =>
  executionId.includes(" ") ? new KeyPartError("not-allowed", "executionId", "no spaces") : `p:dag:log:${executionId}:exec`

const node = (seq: number, extra: Partial<LogNode> = {}): LogWrite => ({
  type: "node", executionId: ID, node: { seq, kind: "action", name: "load", visit: 1, openedAt: 10, ...extra }
})
const exec = (lastSeq: number, opened: boolean, status: "running" | "completed" = "running"): LogWrite => ({
  type: "exec",
  opened,
  record: { executionId: ID, jobId: "job-1", scope: "s", workMasterId: "wm", recipeDigest: "", openedAt: 10, status, lastSeq, ...(status !== "running" ? { closedAt: 20 } : {}) }
})
const bytes = (value: Uint8Array | string) => (typeof value === "string" ? new TextEncoder().encode(value) : value)

describe("execution log writer: the queue and a batch's encoding", () => {
  it("the open and the close of a node in one batch are one value, the last; the record counts its open once", () => {
    const encoder = new LogBatchEncoder(execKeyOf, 4096)
    const out = encoder.encode([
      { scope: "s", writes: [node(0), exec(0, true)] },
      { scope: "s", writes: [node(0, { closedAt: 20, detail: { result: { ok: true } } }), node(1), exec(1, false)] }
    ])
    expect(out.values.map((v) => v.key)).toEqual([`${PREFIX}n:000000`, `${PREFIX}exec`, `${PREFIX}n:000001`])
    const first = decodeNode(out.values[0]!.key, bytes(out.values[0]!.value))
    expect(first._tag === "Success" && first.success).toEqual({ v: 1, seq: 0, kind: "action", name: "load", visit: 1, openedAt: 10, closedAt: 20, detail: { result: { ok: true } } })
    const record = decodeExecution(out.values[1]!.key, bytes(out.values[1]!.value))
    expect(record._tag === "Success" && record.success.lastSeq).toBe(1)
    expect(out.opened).toEqual([{ executionId: ID, openedAt: 10 }])
    expect(out).toMatchObject({ commits: [], unwritable: 0 })
  })

  it("every execution whose record a batch writes is listed, not only the opened ones", () => {
    // A record written after the batch that opened its execution was dropped, or after its place
    // was removed, joins the list again: no record is outside `dag:log:executions`.
    const out = new LogBatchEncoder(execKeyOf, 4096).encode([{ scope: "s", writes: [node(3), exec(3, false)] }, { scope: "s", writes: [exec(4, false, "completed")] }])
    expect(out.opened).toEqual([])
    expect(out.executions).toEqual([{ executionId: ID, openedAt: 10 }])
  })

  it("keeps what it knows of running executions only: a closed one is forgotten once its record is written", () => {
    const encoder = new LogBatchEncoder(execKeyOf, 4096)
    const other = "job-2.1700000000000.abcd0124"
    const execOf = (executionId: string): LogWrite => {
      const write = exec(0, true)
      return write.type === "exec" ? { ...write, record: { ...write.record, executionId, jobId: "job-2" } } : write
    }
    encoder.encode([{ scope: "s", writes: [node(0), exec(0, true)] }, { scope: "s", writes: [execOf(other)] }])
    expect(encoder.remembered).toBe(2)
    encoder.encode([{ scope: "s", writes: [exec(1, false, "completed")] }])
    // Ten thousand finished jobs no longer keep ten thousand record heads in memory.
    expect(encoder.remembered).toBe(1)
  })

  it("a closed execution hands over its record's and every node's key", () => {
    const out = new LogBatchEncoder(execKeyOf, 4096).encode([{ scope: "s", writes: [node(1, { closedAt: 20 }), exec(1, false, "completed")] }])
    expect(out.commits).toEqual([{ scope: "s", keys: [`${PREFIX}exec`, `${PREFIX}n:000000`, `${PREFIX}n:000001`] }])
  })

  it("a detail too large is cut field by field with a marker; one that fits is kept whole", () => {
    const encoder = new LogBatchEncoder(execKeyOf, 64)
    const out = encoder.encode([{ scope: "s", writes: [node(0, { detail: { typeId: "t", result: "x".repeat(200) } }), node(1, { detail: "é".repeat(20) })] }])
    const cut = decodeNode(out.values[0]!.key, bytes(out.values[0]!.value))
    expect(cut._tag === "Success" && cut.success.detail).toMatchObject({ typeId: "t", result: { truncated: true, bytes: 202 } })
    const kept = decodeNode(out.values[1]!.key, bytes(out.values[1]!.value))
    expect(kept._tag === "Success" && kept.success.detail).toBe("é".repeat(20))
  })

  it("a write whose key cannot be built is counted, the others are written", () => {
    const out = new LogBatchEncoder(execKeyOf, 4096).encode([
      { scope: "s", writes: [node(1_000_000), { type: "node", executionId: "bad id", node: { seq: 0, kind: "step", name: "A", openedAt: 1 } }, node(2)] }
    ])
    expect(out.unwritable).toBe(2)
    expect(out.values.map((v) => v.key)).toEqual([`${PREFIX}n:000002`])
  })

  it("the queue keeps what fits of a CAS's writes and says how many did not", () => {
    const queue = new LogWriteQueue(3)
    expect(queue.offer("s", [node(0), node(1)])).toBe(0)
    expect(queue.offer("s", [node(2), node(3), node(4)])).toBe(2)
    expect(queue.offer("s", [node(5)])).toBe(1)
    expect(queue.size).toBe(3)
    expect(queue.takeAll().map((q) => q.writes.length)).toEqual([2, 1])
    expect(queue.size).toBe(0)
    expect(new LogWriteQueue(0).offer("s", [node(0)])).toBe(1)
  })

  it("a backlog is taken in batches of whole CASes", () => {
    const queue = new LogWriteQueue(100)
    for (let i = 0; i < 5; i++) queue.offer("s", [node(i), node(i + 10)])
    expect(queue.take(3).map((q) => q.writes.length)).toEqual([2, 2])
    expect(queue.size).toBe(6)
    expect(queue.take(100)).toHaveLength(3)
    expect(queue.size).toBe(0)
  })

  it.effect("a fiber waiting for writes resumes once one is queued", () =>
    Effect.gen(function* () {
      const queue = new LogWriteQueue(10)
      const waiting = yield* Effect.forkChild(Effect.map(queue.waitForWrites, () => queue.takeAll()))
      yield* Effect.yieldNow
      queue.offer("s", [node(0), node(1)])
      const taken = yield* Fiber.join(waiting)
      expect(taken.map((q) => q.writes.length)).toEqual([2])
    })
  )
})
