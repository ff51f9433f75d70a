import { describe, expect, it } from "vitest"
import { Result } from "effect"
import {
  decodeJobOrderRecord,
  encodeJobOrderRecord,
  firstWorkMasterId,
  JobStates,
  normalizedName,
  priorityOf
} from "@microdcs/job-state"

const jobOrder = { JobOrderID: "jo-1", Priority: 7, WorkMasterID: [{ ID: "wm-1" }, { ID: "wm-2" }], Extra: { kept: true } }

describe("job order record", () => {
  it("round-trips the job order, its state and the comment", () => {
    const text = encodeJobOrderRecord(jobOrder, JobStates.AllowedToStart_Ready, "go")
    const decoded = decodeJobOrderRecord(text)
    expect(Result.isSuccess(decoded)).toBe(true)
    if (Result.isSuccess(decoded)) {
      expect(decoded.success.jobOrder).toEqual(jobOrder)
      expect(normalizedName(decoded.success.state)).toBe("AllowedToStart_Ready")
      expect(decoded.success.comment).toBe("go")
    }
    expect(JSON.parse(text).State).toEqual([
      { StateText: { Text: "AllowedToStart", Locale: "en" }, StateNumber: 2 },
      { StateText: { Text: "Ready", Locale: "en" }, StateNumber: 2 }
    ])
  })

  it("reads priority and the first work master", () => {
    expect(priorityOf(jobOrder)).toBe(7)
    expect(priorityOf({ JobOrderID: "x" })).toBe(0)
    expect(firstWorkMasterId(jobOrder)).toBe("wm-1")
    expect(firstWorkMasterId({ JobOrderID: "x" })).toBeUndefined()
  })

  it("rejects malformed documents without throwing", () => {
    const bad = [
      "not json",
      "[]",
      JSON.stringify({ JobOrder: { JobOrderID: "" }, State: [] }),
      JSON.stringify({ JobOrder: { JobOrderID: "a", Priority: "high" }, State: [{ StateText: { Text: "Running", Locale: "en" }, StateNumber: 3 }] }),
      JSON.stringify({ JobOrder: { JobOrderID: "a", WorkMasterID: [{}] }, State: [{ StateText: { Text: "Running", Locale: "en" }, StateNumber: 3 }] }),
      JSON.stringify({ JobOrder: { JobOrderID: "a" }, State: [{ StateText: { Text: "Flying", Locale: "en" }, StateNumber: 9 }] })
    ]
    for (const text of bad) expect(Result.isFailure(decodeJobOrderRecord(text)), text).toBe(true)
  })
})
