import { describe, expect, it } from "vitest"
import { Result } from "effect"
import { boundDetail, decodeExecution, decodeNode, encodeExecution, encodeNode } from "@microdcs/execution-log"
import { execution, node } from "./LogKit.js"

describe("the log's value encoding", () => {
  it("round-trips an execution record and a node, as UTF-8 JSON with a version", () => {
    const exec = execution("e.b1.p1.1", 3, { parent: { executionId: "e", seq: 1 } })
    const bytes = encodeExecution(exec)
    expect(JSON.parse(new TextDecoder().decode(bytes))).toMatchObject({ v: 1 })
    expect(decodeExecution("k", bytes)).toEqual(Result.succeed(exec))
    const n = node(7, { kind: "branch", children: ["e.b1.p1.1"], detail: { n: "日本" } })
    expect(decodeNode("k", encodeNode(n))).toEqual(Result.succeed(n))
  })

  it("refuses bytes that are no record: bad UTF-8, no JSON object, another version, another shape", () => {
    const cases: Array<[Uint8Array, string]> = [
      [new Uint8Array([0xff, 0xfe]), "no UTF-8 JSON"],
      [new TextEncoder().encode("[1]"), "no JSON object"],
      [new TextEncoder().encode(`{"v":2,"seq":1}`), "unknown record version 2"],
      [encodeNode(node(1)), "not an execution record"]
    ]
    for (const [bytes, message] of cases) {
      expect(decodeExecution("the-key", bytes)).toMatchObject({ _tag: "Failure", failure: { _tag: "LogRecordInvalid", key: "the-key" } })
      expect(Result.getFailure(decodeExecution("the-key", bytes)).pipe((o) => (o._tag === "Some" ? o.value.message : ""))).toContain(message)
    }
  })

  it("bounds a node's detail to a size, with a marker and the beginning of its text", () => {
    expect(boundDetail({ ok: 1 }, 100)).toEqual({ ok: 1 })
    const cut = boundDetail({ error: "x".repeat(500) }, 50) as { truncated: boolean; bytes: number; head: string }
    expect(cut.truncated).toBe(true)
    expect(cut.bytes).toBe(JSON.stringify({ error: "x".repeat(500) }).length)
    expect(Buffer.byteLength(cut.head)).toBeLessThanOrEqual(50)
    // Never a broken character at the cut.
    const multi = boundDetail("日".repeat(100), 10) as { head: string }
    expect(multi.head.isWellFormed() && !multi.head.includes("\uFFFD")).toBe(true)
  })
})
