import { spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { decodeStationScript, DEFAULT_RESEND, readStationScript, type StationScript } from "@microdcs/island-sim"
import { makeAnswers } from "../src/CommandAnswers.js"
import { makeEventData } from "../src/EventData.js"
import { parseEmitLine } from "../src/cli/EmitLines.js"

const TORQUE = "com.example.station.torque.v1"
const TIGHTEN = "com.example.station.tighten.v1"

const good = {
  scopes: ["line-1"],
  commands: [
    { type: TIGHTEN, action: "retighten", reply: { again: true }, emit: [{ type: TORQUE }] },
    { type: TIGHTEN, reply: { done: "{{action}}", job: "{{jobid}}" }, delayMs: [2, 4], silent: { nth: [1] }, error: { message: "jammed", when: { oneIn: 3 } }, emit: [{ type: TORQUE, afterMs: 5 }] }
  ],
  events: {
    [TORQUE]: { data: { ok: true, job: "{{jobid}}" }, sequence: [{ ok: "first" }], oneIn: { every: 4, data: { ok: false } } }
  }
}

const scriptOf = (input: unknown): StationScript => Result.getOrThrow(decodeStationScript(input))

const command = (n: number, action = "tighten", jobId = "jo-1") => ({
  scope: "line-1", type: TIGHTEN, id: `c${n}.1`, jobId, action, attempt: "1", correlationId: `c${n}`, parameters: {}
})

describe("station script", () => {
  it("decodes a script, with the defaults filled in", () => {
    const script = scriptOf(good)
    expect(script.scopes).toEqual(["line-1"])
    expect(script.otherCommands).toBe("reply")
    expect(script.commands[1]).toMatchObject({ type: TIGHTEN, action: undefined, delay: { minMs: 2, maxMs: 4 }, silent: { _tag: "nth", ordinals: [1] } })
    expect(script.events.get(TORQUE)?.resend).toEqual(DEFAULT_RESEND)
  })

  it("refuses a bad script with every problem listed", () => {
    const bad = {
      scopes: ["line-1", "a/b", "line-1"],
      otherCommands: "ignore",
      resend: { everyMs: 3 },
      commands: [
        { type: TIGHTEN, delayMs: [9, 2], silent: "sometimes", error: { when: { oneIn: 0 } }, emit: [{ type: "com.example.nope.v1" }], colour: "red" },
        { type: TIGHTEN, reply: { at: "{{when}}" } },
        { action: "x" }
      ],
      events: { [TORQUE]: { sequence: "first", oneIn: { every: "5" } } },
      schedule: [{ scope: "line-9", type: TORQUE, everyMs: 1 }],
      extra: true
    }
    const decoded = decodeStationScript(bad, "bad.json")
    expect(Result.isFailure(decoded)).toBe(true)
    const problems = Result.isFailure(decoded) ? decoded.failure.problems : []
    const expected = [
      "script.extra: unknown field",
      "scopes[1]: scope 'a/b' must be one topic level",
      "scopes[2]: 'line-1' is listed twice",
      "otherCommands: must be",
      "resend.everyMs: must be 0 (no resend) or at least 10",
      "commands[0].colour: unknown field",
      "commands[0].delayMs: must be milliseconds",
      "commands[0].error.message: must be a non-empty text",
      "commands[0].error.when.oneIn: must be an integer of at least 1",
      "commands[0].silent: must be",
      "commands[0].emit[0].type: 'com.example.nope.v1' is not one of the script's events",
      "commands[1].reply.at: unknown placeholder {{when}}",
      "commands[2].type: must be a non-empty text",
      `events.${TORQUE}.sequence: must be a list`,
      `events.${TORQUE}.oneIn.every: must be an integer of at least 1`,
      "schedule[0].scope: 'line-9' is not one of the script's scopes",
      "schedule[0].everyMs: must be an integer of at least 10"
    ]
    for (const start of expected) expect(problems.some((p) => p.startsWith(start)), `${start}\n  in\n${problems.join("\n")}`).toBe(true)
    expect(problems).toHaveLength(expected.length)
    expect(Result.isFailure(decoded) && decoded.failure.message).toContain("station script bad.json has 17 problems")
  })

  it("flags a rule that an earlier one always takes the commands of", () => {
    const decoded = decodeStationScript({ scopes: ["l"], commands: [{ type: TIGHTEN }, { type: TIGHTEN, action: "retighten" }] })
    expect(Result.isFailure(decoded) && decoded.failure.problems).toEqual([
      "commands[1]: never used, commands[0] takes every command it would (put the more specific rule first)"
    ])
  })

  it.effect("refuses a file that is not JSON", () =>
    Effect.gen(function* () {
      const file = join(mkdtempSync(join(tmpdir(), "island-sim-")), "station.json")
      writeFileSync(file, "{ scopes: [")
      const error = yield* Effect.flip(readStationScript(file))
      expect(error._tag).toBe("ScriptInvalid")
      expect(error.problems[0]).toMatch(/^cannot be read as JSON/)
    })
  )
})

describe("answers and event data", () => {
  it("answers by rule and occurrence: silent on the 1st, an error on every 3rd, the reply's placeholders filled in", () => {
    const answer = makeAnswers(scriptOf(good), makeEventData())
    const answers = [1, 2, 3, 4].map((n) => answer(command(n)))
    expect(answers.map((a) => (a._tag === "Silent" ? "silent" : (a.error ?? "reply")))).toEqual(["silent", "reply", "jammed", "reply"])
    expect(answers[1]).toMatchObject({ _tag: "Reply", rule: 1, data: { done: "tighten", job: "jo-1" }, emit: [{ type: TORQUE, id: "c2.1/com.example.station.torque.v1", afterMs: 5 }] })
    // An error sets off no event; a redelivered command (same id) gets its first answer again, counted once.
    expect(answers[2]).toMatchObject({ emit: [] })
    expect(answer(command(2))).toBe(answers[1])
    expect(answer(command(5))).toMatchObject({ _tag: "Reply", error: undefined })
    expect(answer(command(6, "retighten"))).toMatchObject({ rule: 0, data: { again: true } })
  })

  it("gives an event's data by job: the sequence first, then one emission in N over all jobs takes the variant", () => {
    const script = scriptOf(good).events.get(TORQUE)!
    const data = makeEventData()
    const seen = ["jo-1", "jo-1", "jo-2", "jo-1", "jo-2", "jo-3"].map((job) => data.next(script, TORQUE, "line-1", job))
    expect(seen).toEqual([{ ok: "first" }, { ok: true, job: "jo-1" }, { ok: "first" }, { ok: false }, { ok: true, job: "jo-2" }, { ok: "first" }])
    data.forget("line-1", "jo-1")
    expect(data.next(script, TORQUE, "line-1", "jo-1")).toEqual({ ok: "first" })
  })

  it("reads emit lines from stdin", () => {
    expect(parseEmitLine("emit line-1 com.example.qa.v1 job=jo-7 {\"passed\": true}")).toEqual(
      Result.succeed({ scope: "line-1", type: "com.example.qa.v1", options: { jobId: "jo-7", data: { passed: true } } })
    )
    expect(parseEmitLine("emit line-1 com.example.qa.v1")).toEqual(Result.succeed({ scope: "line-1", type: "com.example.qa.v1", options: {} }))
    expect(parseEmitLine("  # a comment")).toEqual(Result.succeed(undefined))
    expect(Result.isFailure(parseEmitLine("emit line-1 t {oops"))).toBe(true)
    expect(Result.isFailure(parseEmitLine("send line-1 t"))).toBe(true)
  })
})

describe("island-sim station (the command)", () => {
  it("refuses a bad script with every problem on stderr, exit code 2, before it connects to anything", () => {
    const file = join(mkdtempSync(join(tmpdir(), "island-sim-")), "station.json")
    writeFileSync(file, JSON.stringify({ scopes: [], commands: [{ type: TIGHTEN, delayMs: -1 }], events: { x: { oneIn: {} } } }))
    const main = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url))
    // Port 9 (discard) on loopback: a station that tried to connect would fail with another code.
    const run = spawnSync(process.execPath, ["--import", "tsx/esm", "--conditions=source", main, "station", "--script", file, "--url", "mqtt://127.0.0.1:9"], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      encoding: "utf8",
      timeout: 30_000
    })
    expect(run.status, run.stderr).toBe(2)
    expect(run.stderr).toContain("has 3 problems")
    expect(run.stderr).toContain("scopes: must name at least one scope")
    expect(run.stderr).toContain("commands[0].delayMs: must be milliseconds")
    expect(run.stderr).toContain("events.x.oneIn.every: must be an integer of at least 1")
  })
})
