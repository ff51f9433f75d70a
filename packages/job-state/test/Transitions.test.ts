import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { Result } from "effect"
import {
  admitsJob,
  allJobStates,
  allowedTriggers,
  checksAcceptance,
  countsTowardLimit,
  InvalidTransition,
  isAllowed,
  isInternal,
  isTrigger,
  type JobState,
  JobStates,
  normalizedName,
  retiresJob,
  transition,
  type Trigger,
  triggers
} from "@microdcs/job-state"

/**
 * The method/trigger table (docs/design/island-protocol.md), expanded by hand to concrete states
 * so the test does not share the implementation's wildcard logic: trigger → from state → to state.
 */
const NAS = ["NotAllowedToStart_Waiting", "NotAllowedToStart_Ready", "NotAllowedToStart_Loaded"] as const
const AS = ["AllowedToStart_Waiting", "AllowedToStart_Ready", "AllowedToStart_Loaded"] as const
const INT = ["Interrupted_Held", "Interrupted_Suspended"] as const
const END = ["Ended_Completed", "Ended_Closed"] as const
const all = (froms: ReadonlyArray<string>, to: string) => Object.fromEntries(froms.map((f) => [f, to]))

const expected: Record<Trigger, Record<string, string>> = {
  Store: { InitialState: "NotAllowedToStart_Ready" },
  StoreAndStart: { InitialState: "AllowedToStart_Ready" },
  Start: all(NAS, "AllowedToStart_Ready"),
  RevokeStart: all(AS, "NotAllowedToStart_Ready"),
  Update: { ...all(NAS, "NotAllowedToStart_Ready"), ...all(AS, "AllowedToStart_Ready") },
  Run: all(AS, "Running"),
  Pause: { Running: "Interrupted_Suspended" },
  Resume: all(INT, "Running"),
  Stop: all(["Running", ...INT], "Ended_Completed"),
  Complete: { Running: "Ended_Completed" },
  Abort: all([...NAS, ...AS, "Running", ...INT], "Aborted"),
  Cancel: all([...NAS, ...AS], "EndState"),
  Clear: all([...END, "Aborted"], "EndState")
}

const cases = allJobStates.flatMap((state) =>
  triggers.map((trigger) => ({ from: normalizedName(state), trigger, state, to: expected[trigger][normalizedName(state)] }))
)

describe("transition table", () => {
  it("covers exactly the table's 13 triggers, Run and Complete internal", () => {
    expect(triggers).toEqual(Object.keys(expected))
    expect(triggers.filter(isInternal)).toEqual(["Run", "Complete"])
    expect(cases).toHaveLength(14 * 13)
  })

  it.each(cases)("$trigger from $from → $to", ({ state, trigger, to }) => {
    const result = transition(state, trigger)
    expect(isAllowed(state, trigger)).toBe(to !== undefined)
    if (to !== undefined) {
      expect(normalizedName(Result.getOrThrow(result))).toBe(to)
      return
    }
    if (Result.isSuccess(result)) throw new Error(`${trigger} from ${normalizedName(state)} was allowed`)
    expect(result.failure).toBeInstanceOf(InvalidTransition)
    expect(result.failure).toMatchObject({ _tag: "InvalidTransition", from: state, trigger })
    expect(result.failure.message).toBe(`${trigger} is not allowed in state ${normalizedName(state)}`)
  })

  it("lists the allowed triggers of each state in table order", () => {
    for (const state of allJobStates) {
      expect(allowedTriggers(state)).toEqual(triggers.filter((t) => expected[t][normalizedName(state)] !== undefined))
    }
    expect(allowedTriggers(JobStates.EndState)).toEqual([])
    expect(allowedTriggers(JobStates.InitialState)).toEqual(["Store", "StoreAndStart"])
    expect(allowedTriggers(JobStates.Running)).toEqual(["Pause", "Stop", "Complete", "Abort"])
  })

  it("Update keeps the main state and resets the substate to Ready", () => {
    expect(transition({ main: "AllowedToStart", sub: "Loaded" }, "Update")).toEqual(Result.succeed(JobStates.AllowedToStart_Ready))
    expect(transition({ main: "NotAllowedToStart", sub: "Waiting" }, "Update")).toEqual(
      Result.succeed(JobStates.NotAllowedToStart_Ready)
    )
  })

  it("accepts states built by hand, not only the package's instances", () => {
    expect(transition({ main: "Running" }, "Pause")).toEqual(Result.succeed(JobStates.Interrupted_Suspended))
  })

  it("marks which triggers run acceptance, admit and retire a job", () => {
    expect(triggers.filter(checksAcceptance)).toEqual(["Store", "StoreAndStart", "Update"])
    expect(triggers.filter(admitsJob)).toEqual(["Store", "StoreAndStart"])
    expect(triggers.filter(retiresJob)).toEqual(["Cancel", "Clear"])
  })

  it("recognises trigger names", () => {
    expect(isTrigger("Store")).toBe(true)
    expect(isTrigger("store")).toBe(false)
    expect(isTrigger("hasOwnProperty")).toBe(false)
  })
})

describe("random trigger sequences from InitialState", () => {
  const reachable = new Set(["InitialState", ...Object.values(expected).flatMap((m) => Object.values(m))])

  /**
   * A step is any trigger (mostly refused) or, to get past the early states often enough, an index
   * into the triggers allowed at that point. Uniform triggers alone reach Interrupted in <1% of runs.
   */
  const step = fc.oneof(
    { weight: 1, arbitrary: fc.record({ any: fc.constantFrom(...triggers) }) },
    { weight: 2, arbitrary: fc.record({ allowed: fc.nat() }) }
  )
  const pick = (state: JobState, s: { any: Trigger } | { allowed: number }): Trigger => {
    if ("any" in s) return s.any
    const allowed = allowedTriggers(state)
    // EndState allows nothing: try a trigger anyway, it must be refused.
    return allowed.length === 0 ? triggers[s.allowed % triggers.length]! : allowed[s.allowed % allowed.length]!
  }

  it("only visit table states, never leave EndState, run and complete only from AllowedToStart and Running", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (sequence) => {
        let state: JobState = JobStates.InitialState
        for (const s of sequence) {
          const trigger = pick(state, s)
          const result = transition(state, trigger)
          expect(Result.isSuccess(result)).toBe(isAllowed(state, trigger))
          if (Result.isFailure(result)) {
            expect(result.failure.from).toBe(state)
            continue
          }
          const next = result.success
          expect(reachable.has(normalizedName(next))).toBe(true)
          expect(state.main).not.toBe("EndState")
          if (trigger === "Run") expect(state.main).toBe("AllowedToStart")
          if (trigger === "Complete") expect(state.main).toBe("Running")
          // A job starts counting toward the acceptance limit exactly when admitted, stops exactly when retired.
          expect(!countsTowardLimit(state) && countsTowardLimit(next)).toBe(admitsJob(trigger))
          expect(countsTowardLimit(state) && !countsTowardLimit(next)).toBe(retiresJob(trigger))
          state = next
        }
        if (state.main === "EndState") expect(allowedTriggers(state)).toEqual([])
      }),
      { numRuns: 1000 }
    )
  })

  it("reach every state the table names as a target", () => {
    const seen = new Set<string>()
    const walk = (state: JobState, depth: number): void => {
      seen.add(normalizedName(state))
      if (depth === 0) return
      for (const trigger of allowedTriggers(state)) walk(Result.getOrThrow(transition(state, trigger)), depth - 1)
    }
    walk(JobStates.InitialState, 6)
    expect([...seen].sort()).toEqual([...reachable].sort())
  })
})
