import { Effect } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { demoLogging } from "../src/DemoLogging.js"

/** Every line the logger wrote to the console, whichever method it used. */
const captureConsole = () => {
  const lines: Array<string> = []
  const record = (...args: ReadonlyArray<unknown>) => void lines.push(args.map(String).join(" "))
  for (const method of ["log", "info", "warn", "error", "debug", "trace"] as const) vi.spyOn(console, method).mockImplementation(record)
  vi.spyOn(console, "group").mockImplementation(() => undefined)
  vi.spyOn(console, "groupEnd").mockImplementation(() => undefined)
  return lines
}

afterEach(() => void vi.restoreAllMocks())

describe("the demo's pretty log", () => {
  it("prints a multi-line warning with its annotations and nothing after it (no stray 'undefined')", () => {
    const lines = captureConsole()
    Effect.runSync(
      Effect.logWarning("station event not journaled; it goes to the engine all the same").pipe(
        Effect.annotateLogs({ type: "com.example.station.torque.v1", error: "Timeout: no answer within 2s" }),
        Effect.provide(demoLogging)
      )
    )
    Effect.runSync(Effect.logInfo("below the demo's level").pipe(Effect.provide(demoLogging)))
    expect(lines[0]).toMatch(/WARN .*: station event not journaled; it goes to the engine all the same$/)
    expect(lines.slice(1)).toEqual(["type: com.example.station.torque.v1", "error: Timeout: no answer within 2s"])
    expect(lines).not.toContain("undefined")
  })
})
