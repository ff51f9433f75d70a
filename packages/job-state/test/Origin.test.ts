import { Result } from "effect"
import { describe, expect, it } from "vitest"
import {
  decodeJobOrderRecord,
  decodeOrigin,
  encodeJobOrderRecord,
  encodeOrigin,
  JobStates,
  MAX_ORIGIN_COMMENT_LENGTH,
  mesOrigin,
  originProblems,
  originText,
  withComment,
  withFrom
} from "@microdcs/job-state"

// Issue 21: who caused a change is recorded with it (the MES, an operator on the CLI, ...).

describe("origins", () => {
  it("read as kind:id, and round-trip through their stored form", () => {
    const operator = { kind: "cli", id: "alice@host", comment: "tool broke" } as const
    expect(originText(operator)).toBe("cli:alice@host")
    expect(decodeOrigin(encodeOrigin(operator))).toEqual(operator)
    expect(decodeOrigin(operator)).toEqual(operator)
    expect(originText(mesOrigin("urn:mes:line-1"))).toBe("mes:urn:mes:line-1")
  })

  it("a hand-given origin gets every problem at once", () => {
    expect(originProblems({ kind: "cli", id: "alice@host" })).toEqual([])
    expect(originProblems({ kind: "robot", id: "" })).toEqual(['kind "robot" is not one of mes, cli, console, engine, trigger', "the id is empty"])
    expect(originProblems({ kind: "cli", id: `a\u0007${"x".repeat(300)}` })).toEqual([
      "the id is 302 characters long, at most 256",
      "the id holds control characters"
    ])
  })

  it("anything stored that is no origin reads as none, never an error (older entries show as before)", () => {
    for (const value of [undefined, null, "", "not json", "{}", '{"kind":"robot","id":"x"}', '{"kind":"cli"}', 42, []]) {
      expect(decodeOrigin(value), JSON.stringify(value)).toBeUndefined()
    }
  })

  it("an MES source and a comment are cut to their bounds", () => {
    expect(mesOrigin("s".repeat(1000)).id).toHaveLength(256)
    expect(withComment(mesOrigin("m"), "c".repeat(2000)).comment).toHaveLength(MAX_ORIGIN_COMMENT_LENGTH)
    expect(withComment(mesOrigin("m"), undefined)).toEqual({ kind: "mes", id: "m" })
  })

  it("the job order record keeps the last change's origin; one without, or a broken one, decodes without", () => {
    const jobOrder = { JobOrderID: "jo-1" }
    const withOrigin = decodeJobOrderRecord(encodeJobOrderRecord(jobOrder, JobStates.Running, undefined, { kind: "cli", id: "alice@host" }))
    expect(Result.getOrThrow(withOrigin).origin).toEqual({ kind: "cli", id: "alice@host" })
    expect(Result.getOrThrow(decodeJobOrderRecord(encodeJobOrderRecord(jobOrder, JobStates.Running))).origin).toBeUndefined()
    const broken = JSON.stringify({ ...JSON.parse(encodeJobOrderRecord(jobOrder, JobStates.Running)), Origin: { kind: 1 } })
    expect(Result.getOrThrow(decodeJobOrderRecord(broken)).origin).toBeUndefined()
  })

  it("where the actor was (`from`) round-trips; an entry without it reads as before; a bad one is cleaned and cut", () => {
    const console = withFrom(withComment({ kind: "console", id: "alice" }, "stuck"), "203.0.113.7")
    expect(console).toEqual({ kind: "console", id: "alice", comment: "stuck", from: "203.0.113.7" })
    expect(decodeOrigin(encodeOrigin(console))).toEqual(console)
    expect(decodeOrigin('{"kind":"cli","id":"alice@host","comment":"c"}')).toEqual({ kind: "cli", id: "alice@host", comment: "c" })
    expect(decodeOrigin('{"kind":"cli","id":"alice@host","from":7}')).toEqual({ kind: "cli", id: "alice@host" })
    expect(withFrom(mesOrigin("m"), undefined)).toEqual({ kind: "mes", id: "m" })
    expect(withFrom(mesOrigin("m"), " \u0007 ")).toEqual({ kind: "mes", id: "m" })
    expect(withFrom(mesOrigin("m"), "h".repeat(1000)).from).toHaveLength(256)
  })
})
