import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { KeyPartError, MAX_NODE_SEQ, makeKeySchema, nodeSeqOf, nodeSeqPart, type KeySchema } from "@microdcs/keyschema"

const schema = makeKeySchema("microdcs") as KeySchema
/** A child execution id as the engine composes it: `{executionId}.{branch}.{path}.{visit}`. */
const childId = "exec-7f3a.b1.p2.1"

describe("execution log keys", () => {
  it("pads the node sequence to six digits in one place", () => {
    expect(nodeSeqPart(0)).toBe("000000")
    expect(nodeSeqPart(9)).toBe("000009")
    expect(nodeSeqPart(10)).toBe("000010")
    expect(nodeSeqPart(MAX_NODE_SEQ)).toBe("999999")
    expect(nodeSeqOf("000042")).toBe(42)
    expect(nodeSeqOf("42")).toBeUndefined()
  })

  it("refuses a sequence number that does not fit six digits, or is no integer", () => {
    for (const bad of [-1, MAX_NODE_SEQ + 1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(nodeSeqPart(bad)).toBeInstanceOf(KeyPartError)
    }
  })

  it("builds the exec, node, executions and commit keys; execution ids with dots stay readable", () => {
    expect(schema.key("executionLogExec", { executionId: childId })).toBe("microdcs:dag:log:exec-7f3a.b1.p2.1:exec")
    expect(schema.key("executionLogNode", { executionId: childId, seq: nodeSeqPart(9) as string })).toBe(
      "microdcs:dag:log:exec-7f3a.b1.p2.1:n:000009"
    )
    expect(schema.key("executionLogExecutions", {})).toBe("microdcs:dag:log:executions")
    expect(schema.key("executionLogCommits", { scope: "line-1" })).toBe("microdcs:dag:commits:line-1")
  })

  it("refuses an unpadded seq when building, and does not parse one as a node key", () => {
    expect(schema.key("executionLogNode", { executionId: "e", seq: "9" })).toMatchObject({ problem: "not-allowed", name: "seq" })
    expect(schema.parse("microdcs:dag:log:e:n:9")).toBeUndefined()
  })

  it("parses every log key back, ids with dots and separators included", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("exec", "7f3a", "b1", "p2", "1", ":", "|", "%", "é", "n"), { minLength: 1, maxLength: 6 }).map((parts) => parts.join(".")),
        fc.integer({ min: 0, max: MAX_NODE_SEQ }),
        (executionId, seq) => {
          const node = schema.key("executionLogNode", { executionId, seq: nodeSeqPart(seq) as string }) as string
          const exec = schema.key("executionLogExec", { executionId }) as string
          expect(schema.parse(node)).toEqual({ family: "executionLogNode", parts: { executionId, seq: nodeSeqPart(seq) } })
          expect(schema.parse(exec)).toEqual({ family: "executionLogExec", parts: { executionId } })
        }
      ),
      { numRuns: 500 }
    )
  })

  it("node keys of one execution sort in byte order as their sequence numbers do (9 before 10)", () => {
    const keys = [10, 9, 100_000, 0, 99].map((seq) => schema.key("executionLogNode", { executionId: childId, seq: nodeSeqPart(seq) as string }) as string)
    const byteOrder = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    expect(byteOrder.map((k) => Number(k.slice(-6)))).toEqual([0, 9, 10, 99, 100_000])
  })
})
