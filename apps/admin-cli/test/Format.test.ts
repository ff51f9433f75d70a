import { describe, expect, it } from "vitest"
import { ExitCode, exitCodeOf } from "../src/ExitCode.js"
import { humanDuration, isoTime, parseDuration } from "../src/Format.js"
import { progressLine } from "../src/Progress.js"
import { oldEnough } from "../src/PurgeCandidates.js"

describe("durations and times", () => {
  it("parses --older-than durations and rejects anything else", () => {
    expect(parseDuration("7d")).toBe(7 * 86_400_000)
    expect(parseDuration("1h30m")).toBe(5_400_000)
    expect(parseDuration("90s")).toBe(90_000)
    expect(parseDuration("250ms")).toBe(250)
    expect(parseDuration("0s")).toBe(0)
    for (const bad of ["", "7", "soon", "-1h", "1y", "1h 30m"]) expect(parseDuration(bad)).toBeUndefined()
  })

  it("shows the two largest units", () => {
    expect(humanDuration(0)).toBe("0s")
    expect(humanDuration(1500)).toBe("1s 500ms")
    expect(humanDuration(7 * 86_400_000 - 1000)).toBe("6d 23h")
    expect(humanDuration(-1)).toBe("-")
    expect(isoTime(0)).toBe("-")
    expect(isoTime(1_700_000_000_000)).toBe("2023-11-14T22:13:20.000Z")
  })
})

describe("purge age", () => {
  const now = 10_000_000
  it("uses the last change entry, else the oldest entry as a lower bound of the age", () => {
    expect(oldEnough(now - 5000, now - 9000, 4000, now)).toBe(true)
    expect(oldEnough(now - 3000, now - 9000, 4000, now)).toBe(false)
    // No entry of its own left: it changed before the oldest entry still in the stream.
    expect(oldEnough(null, now - 9000, 4000, now)).toBe(true)
    expect(oldEnough(null, now - 1000, 4000, now)).toBe(false)
    expect(oldEnough(null, null, 4000, now)).toBe(true)
  })
})

describe("progress and exit codes", () => {
  it("fills the bar phase by phase", () => {
    expect(progressLine({ phase: "scopes", scanned: 1, repaired: 0, removed: 0 })).toBe(
      "[#-------------------] 1/7 scopes      scanned 1, repaired 0, removed 0"
    )
    expect(progressLine({ phase: "references", scanned: 40, repaired: 2, removed: 1 })).toMatch(/^\[#{19}-\] 7\/7 references/)
  })

  it("maps every failure to one documented exit code", () => {
    expect(exitCodeOf("ProblemsFound")).toBe(ExitCode.problems)
    expect(exitCodeOf("InvalidInput")).toBe(ExitCode.usage)
    expect(exitCodeOf("NotFound")).toBe(ExitCode.notFound)
    expect(exitCodeOf("StoreUnavailable")).toBe(ExitCode.unavailable)
    expect(exitCodeOf("UnknownOutcome")).toBe(ExitCode.unavailable)
    expect(exitCodeOf("Refused")).toBe(ExitCode.refused)
    expect(exitCodeOf("VersionConflict")).toBe(ExitCode.conflict)
    expect(exitCodeOf("SomethingNew")).toBe(ExitCode.internal)
  })
})
