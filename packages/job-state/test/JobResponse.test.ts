import { readFileSync } from "node:fs"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import {
  actualsOf,
  decodeJobResponse,
  decodeJobResponseText,
  fromStoredState,
  type JobResponse,
  JobStates,
  makeJobResponse,
  MalformedJobResponse,
  normalizedName,
  toStoredState
} from "@microdcs/job-state"
import { v1Document, v2Document } from "./JobResponseArbitraries.js"

const jobOrder = JSON.parse(readFileSync(new URL("../../test-utils/fixtures/job-order.json", import.meta.url), "utf8"))

const decoded = (input: unknown): JobResponse => Result.getOrThrow(decodeJobResponse(input))

const refused = (input: unknown): MalformedJobResponse => {
  const result = decodeJobResponse(input)
  if (Result.isSuccess(result)) throw new Error(`decoded ${JSON.stringify(input)}`)
  return result.failure
}

const old = {
  ID: "jo-1-response",
  JobOrderID: "jo-1",
  StartTime: "2025-05-01T08:00:00.000Z",
  EndTime: "2025-05-01T08:01:00.000Z",
  JobState: "Aborted",
  Data: { fit: { done: true }, torque: 86 },
  Error: "spindle jammed"
}

describe("decodeJobResponse: the old form", () => {
  it("turns each field into its new form", () => {
    expect(decoded(old)).toEqual({
      JobResponseID: "jo-1-response",
      Description: { Text: "spindle jammed", Locale: "en" },
      JobOrderID: "jo-1",
      StartTime: "2025-05-01T08:00:00.000Z",
      EndTime: "2025-05-01T08:01:00.000Z",
      JobState: [{ StateText: { Text: "Aborted", Locale: "en" }, StateNumber: 6 }],
      JobResponseData: [
        { ID: "fit", Value: { done: true } },
        { ID: "torque", Value: 86 }
      ],
      PersonnelActuals: [],
      EquipmentActuals: [],
      PhysicalAssetActuals: [],
      MaterialActuals: []
    })
  })

  it("keeps everything an old document says, and the result decodes to itself (seeded)", () => {
    fc.assert(
      fc.property(v1Document, (v1) => {
        const v2 = decoded(v1)
        expect(v2.JobResponseID).toBe(v1.ID)
        expect([v2.JobOrderID, v2.StartTime, v2.EndTime]).toEqual([v1.JobOrderID, v1.StartTime, v1.EndTime])
        expect(normalizedName(Result.getOrThrow(fromStoredState(v2.JobState)))).toBe(v1.JobState)
        expect(v2.JobResponseData.map((p) => p.ID)).toEqual(Object.keys(v1.Data))
        expect(Object.fromEntries(v2.JobResponseData.map((p) => [p.ID, p.Value]))).toEqual(v1.Data)
        expect(v2.Description).toEqual(v1.Error === undefined ? undefined : { Text: v1.Error, Locale: "en" })
        expect([v2.PersonnelActuals, v2.EquipmentActuals, v2.PhysicalAssetActuals, v2.MaterialActuals]).toEqual([[], [], [], []])
        expect(decoded(JSON.parse(JSON.stringify(v2)))).toEqual(v2)
      }),
      { seed: 2025, numRuns: 300 }
    )
  })

  it("reads an old document from its stored text as from its value (seeded)", () => {
    fc.assert(
      fc.property(v1Document, (v1) => {
        expect(Result.getOrThrow(decodeJobResponseText(JSON.stringify(v1)))).toEqual(decoded(v1))
      }),
      { seed: 2026, numRuns: 100 }
    )
  })
})

describe("decodeJobResponse: the new form", () => {
  it("takes a new document as it is (seeded)", () => {
    fc.assert(
      fc.property(v2Document, (v2) => {
        expect(decoded(v2)).toEqual(v2)
      }),
      { seed: 2027, numRuns: 300 }
    )
  })

  it("leaves out fields the model does not know", () => {
    const made = makeJobResponse({ responseId: "r", jobOrderId: "j", startTime: 0, endTime: 1, state: JobStates.Ended_Completed, data: {} })
    expect(decoded({ ...made, Extra: 1 })).toEqual(made)
  })
})

describe("decodeJobResponse: neither form", () => {
  it("lists every problem of the form the document looks like, as a tagged error", () => {
    const { EndTime: _left, ...withoutEnd } = old
    const v1 = refused({ ...withoutEnd, JobState: "Finished", Data: [], StartTime: "yesterday" })
    expect(v1).toBeInstanceOf(MalformedJobResponse)
    expect(v1._tag).toBe("MalformedJobResponse")
    expect(v1.form).toBe("v1")
    expect(v1.problems).toEqual([
      "StartTime: Expected an RFC 3339 date-time such as 2025-05-01T08:00:00.000Z",
      "EndTime: Missing key",
      "JobState: Expected a normalized job state name such as Ended_Completed",
      "Data: Expected object"
    ])
    const current = decoded(old)
    const { MaterialActuals: _left2, ...withoutMaterial } = current
    const v2 = refused({ ...withoutMaterial, JobResponseID: 7, JobState: [{ StateText: { Text: "Ended", Locale: "en" }, StateNumber: 5 }], EquipmentActuals: [{ Quantity: "1" }] })
    expect(v2.form).toBe("v2")
    expect(v2.problems).toEqual(["JobResponseID: Expected string", "JobState: Ended needs a substate", "EquipmentActuals[0].ID: Missing key", "MaterialActuals: Missing key"])
    expect(v2.message).toContain("JobState: Ended needs a substate; EquipmentActuals[0].ID")
  })

  it("refuses what is no object, and text that is no JSON", () => {
    for (const input of [null, "x", 3, [old]]) expect(refused(input).problems).toEqual(["a job response must be a JSON object"])
    const text = decodeJobResponseText("{not json")
    expect(Result.isFailure(text) && text.failure.problems).toEqual(["the document is not JSON"])
    expect(refused({}).problems).toHaveLength(10)
  })
})

describe("makeJobResponse", () => {
  it("writes the engine's response: the state as a list, the data as parameters, the failure as the description", () => {
    const response = makeJobResponse({
      responseId: "jo-1-response",
      jobOrderId: "jo-1",
      startTime: Date.parse(old.StartTime),
      endTime: Date.parse(old.EndTime),
      state: JobStates.Aborted,
      data: { fit: { done: true }, torque: 86, lost: undefined },
      error: "spindle jammed"
    })
    expect(response).toEqual({ ...decoded(old), JobResponseData: [...decoded(old).JobResponseData, { ID: "lost", Value: null }] })
    expect(response.JobState).toEqual(toStoredState(JobStates.Aborted))
  })

  it("takes the job order's requirements as the actuals", () => {
    expect(actualsOf(jobOrder)).toEqual({
      PersonnelActuals: [{ ID: "operator-12" }],
      EquipmentActuals: [{ ID: "station-7" }],
      PhysicalAssetActuals: [{ ID: "nutrunner-3" }],
      MaterialActuals: [{ MaterialClassID: "axle", MaterialDefinitionID: "axle-front-a2" }]
    })
    expect(actualsOf(undefined)).toEqual({ PersonnelActuals: [], EquipmentActuals: [], PhysicalAssetActuals: [], MaterialActuals: [] })
  })

  it("keeps of a requirement the fields of its type that have their type, and drops entries that are none", () => {
    const actuals = actualsOf({
      JobOrderID: "jo-2",
      EquipmentRequirements: [
        { ID: "e1", EquipmentUse: "Tightening", Quantity: 2, Description: [{ Text: "nutrunner", Locale: "en" }], Properties: [{ ID: "p" }] },
        { EquipmentUse: "no id" },
        "e3"
      ],
      MaterialRequirements: [{ MaterialClassID: null, MaterialDefinitionID: "d1", Quantity: "4", EngineeringUnits: { UnitId: 4408652 } }],
      PersonnelRequirements: { ID: "not a list" }
    })
    expect(actuals).toEqual({
      PersonnelActuals: [],
      EquipmentActuals: [{ ID: "e1", EquipmentUse: "Tightening", Description: [{ Text: "nutrunner", Locale: "en" }] }],
      PhysicalAssetActuals: [],
      MaterialActuals: [{ MaterialDefinitionID: "d1", Quantity: "4", EngineeringUnits: { UnitId: 4408652 } }]
    })
  })
})
