import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { Result } from "effect"
import {
  allJobStates,
  countsTowardLimit,
  entryState,
  fromNormalizedName,
  fromStoredState,
  isFinished,
  isTerminal,
  JobStates,
  jobState,
  MalformedJobState,
  normalizedName,
  sameState,
  toStoredState
} from "@microdcs/job-state"

/**
 * The state table (docs/design/island-protocol.md), written out independently of the
 * implementation: name → numbers.
 */
const expectedNumbers: Record<string, readonly [number] | readonly [number, number]> = {
  InitialState: [0],
  NotAllowedToStart_Waiting: [1, 1],
  NotAllowedToStart_Ready: [1, 2],
  NotAllowedToStart_Loaded: [1, 3],
  AllowedToStart_Waiting: [2, 1],
  AllowedToStart_Ready: [2, 2],
  AllowedToStart_Loaded: [2, 3],
  Running: [3],
  Interrupted_Held: [4, 1],
  Interrupted_Suspended: [4, 2],
  Ended_Completed: [5, 1],
  Ended_Closed: [5, 2],
  Aborted: [6],
  EndState: [7]
}

const entry = (Text: string, StateNumber: number) => ({ StateText: { Text, Locale: "en" }, StateNumber })

const malformed = (input: unknown): string => {
  const result = fromStoredState(input)
  if (Result.isSuccess(result)) throw new Error(`accepted ${JSON.stringify(input)} as ${normalizedName(result.success)}`)
  expect(result.failure).toBeInstanceOf(MalformedJobState)
  return result.failure.reason
}

describe("states", () => {
  it("has exactly the table's 14 states, in table order", () => {
    expect(allJobStates.map(normalizedName)).toEqual(Object.keys(expectedNumbers))
  })

  it("names states by joining texts with _", () => {
    expect(normalizedName({ main: "AllowedToStart", sub: "Ready" })).toBe("AllowedToStart_Ready")
    expect(normalizedName({ main: "Running" })).toBe("Running")
    expect(normalizedName(JobStates.Ended_Completed)).toBe("Ended_Completed")
  })

  it("enters compound states at their entry substate", () => {
    expect(normalizedName(entryState("NotAllowedToStart"))).toBe("NotAllowedToStart_Ready")
    expect(normalizedName(entryState("AllowedToStart"))).toBe("AllowedToStart_Ready")
    expect(normalizedName(entryState("Interrupted"))).toBe("Interrupted_Suspended")
    expect(normalizedName(entryState("Ended"))).toBe("Ended_Completed")
    expect(normalizedName(entryState("Running"))).toBe("Running")
  })

  it("looks states up by parts and by name, and hands out one instance per state", () => {
    expect(jobState("Interrupted", "Held")).toBe(JobStates.Interrupted_Held)
    expect(jobState("Interrupted", "Ready")).toBeUndefined()
    expect(jobState("Running", "Ready")).toBeUndefined()
    for (const state of allJobStates) expect(Result.getOrThrow(fromNormalizedName(normalizedName(state)))).toBe(state)
    expect(Result.isFailure(fromNormalizedName("Running_Ready"))).toBe(true)
    expect(Result.isFailure(fromNormalizedName("NotAllowedToStart"))).toBe(true)
    expect(Result.isFailure(fromNormalizedName("toString"))).toBe(true)
  })

  it("compares states structurally with sameState", () => {
    expect(sameState({ main: "Ended", sub: "Closed" }, JobStates.Ended_Closed)).toBe(true)
    expect(sameState(JobStates.Ended_Closed, JobStates.Ended_Completed)).toBe(false)
  })

  it("classifies terminal, finished and limit-counting states", () => {
    const names = (p: (s: (typeof allJobStates)[number]) => boolean) => allJobStates.filter(p).map(normalizedName)
    expect(names(isTerminal)).toEqual(["EndState"])
    expect(names(isFinished)).toEqual(["Ended_Completed", "Ended_Closed", "Aborted"])
    expect(names((s) => !countsTowardLimit(s))).toEqual(["InitialState", "EndState"])
  })
})

describe("stored state", () => {
  it.each(Object.entries(expectedNumbers))("writes and reads %s", (name, numbers) => {
    const state = Result.getOrThrow(fromNormalizedName(name))
    const parts = name.split("_")
    const stored = toStoredState(state)
    expect(stored).toEqual(parts.map((text, i) => entry(text, numbers[i]!)))
    expect(Result.getOrThrow(fromStoredState(stored))).toBe(state)
    // It survives the trip through the JSON document as well.
    expect(Result.getOrThrow(fromStoredState(JSON.parse(JSON.stringify(stored))))).toBe(state)
  })

  it("returns fresh entries on every call", () => {
    const a = toStoredState(JobStates.Running)
    expect(a).not.toBe(toStoredState(JobStates.Running))
    expect(Object.isFrozen(a)).toBe(false)
  })

  it.each([
    ["not a list", undefined],
    ["not a list", null],
    ["not a list", "Running"],
    ["not a list", { StateText: { Text: "Running", Locale: "en" }, StateNumber: 3 }],
    ["empty", []],
    ["three entries", [entry("Ended", 5), entry("Completed", 1), entry("Completed", 1)]],
    ["entry null", [null]],
    ["entry an array", [["Running", 3]]],
    ["no StateText", [{ StateNumber: 3 }]],
    ["StateText a string", [{ StateText: "Running", StateNumber: 3 }]],
    ["Text not a string", [{ StateText: { Text: 3, Locale: "en" }, StateNumber: 3 }]],
    ["Locale missing", [{ StateText: { Text: "Running" }, StateNumber: 3 }]],
    ["Locale not en", [{ StateText: { Text: "Running", Locale: "de" }, StateNumber: 3 }]],
    ["StateNumber missing", [{ StateText: { Text: "Running", Locale: "en" } }]],
    ["StateNumber a string", [{ StateText: { Text: "Running", Locale: "en" }, StateNumber: "3" }]],
    ["StateNumber fractional", [entry("Running", 3.5)]],
    ["StateNumber NaN", [entry("Running", Number.NaN)]],
    ["unknown main state", [entry("Paused", 3)]],
    ["prototype key as main state", [entry("toString", 3)]],
    ["main number disagrees with text", [entry("Running", 4)]],
    ["compound state without substate", [entry("NotAllowedToStart", 1)]],
    ["simple state with substate", [entry("Running", 3), entry("Ready", 2)]],
    ["substate of another main state", [entry("Interrupted", 4), entry("Ready", 2)]],
    ["prototype key as substate", [entry("Ended", 5), entry("constructor", 1)]],
    ["substate number disagrees with text", [entry("AllowedToStart", 2), entry("Ready", 3)]],
    ["substate Locale not en", [entry("Ended", 5), { StateText: { Text: "Completed", Locale: "fr" }, StateNumber: 1 }]],
    ["substate not an object", [entry("Ended", 5), 1]],
    ["substate missing in a 2-list", [entry("Ended", 5), undefined]]
  ])("rejects %s", (_, input) => {
    expect(malformed(input)).toMatch(/\S/)
  })

  it("names what is wrong", () => {
    expect(malformed([entry("Running", 4)])).toBe("Running has number 4, expected 3")
    expect(malformed([entry("Interrupted", 4), entry("Ready", 2)])).toBe("'Ready' is not a substate of Interrupted")
  })

  it("never throws, whatever it is given", () => {
    fc.assert(fc.property(fc.anything(), (input) => Result.isResult(fromStoredState(input))), { numRuns: 1000 })
  })

  it("accepts a (text, number) list exactly when it is a state's stored form", () => {
    const canonical = new Set(allJobStates.map((s) => JSON.stringify(toStoredState(s))))
    const texts = fc.constantFrom("InitialState", "AllowedToStart", "Interrupted", "Ended", "Running", "Ready", "Held", "Closed", "EndState")
    const stored = fc.array(fc.tuple(texts, fc.integer({ min: 0, max: 8 })), { minLength: 1, maxLength: 2 })
    fc.assert(
      fc.property(stored, (pairs) => {
        const input = pairs.map(([text, number]) => entry(text, number))
        return Result.isSuccess(fromStoredState(input)) === canonical.has(JSON.stringify(input))
      }),
      { numRuns: 2000 }
    )
  })
})
