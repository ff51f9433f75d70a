import { readFileSync, writeFileSync } from "node:fs"
import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import fc from "fast-check"
import {
  decodeJobResponse,
  JOB_RESPONSE_SCHEMA_ID,
  JOB_RESPONSE_V1_SCHEMA_ID,
  JobResponse,
  jobResponseJsonSchema,
  JobResponseV1,
  jobResponseV1JsonSchema,
  JobStates,
  makeJobResponse
} from "@microdcs/job-state"
import { v1Candidate, v1Document, v2Candidate } from "./JobResponseArbitraries.js"

/**
 * The published job response schemas are the generated ones (rewrite them with `UPDATE_SCHEMAS=1`),
 * valid JSON Schema 2020-12 (ajv in strict mode), and each accepts exactly what its form's model accepts.
 */

const published = {
  v2: new URL("../../../docs/schemas/job-response/v2.0.0/schema.json", import.meta.url),
  v1: new URL("../../../docs/schemas/job-response/v1.0.0/schema.json", import.meta.url)
}
const jobOrder = JSON.parse(readFileSync(new URL("../../test-utils/fixtures/job-order.json", import.meta.url), "utf8"))

const ajv = new Ajv2020({ strict: true, allErrors: true })
const v2Accepts = ajv.compile(jobResponseJsonSchema())
const v1Accepts = ajv.compile(jobResponseV1JsonSchema())
const isV2 = (value: unknown) => Result.isSuccess(Schema.decodeUnknownResult(JobResponse)(value))
const isV1 = (value: unknown) => Result.isSuccess(Schema.decodeUnknownResult(JobResponseV1)(value))

describe("the published job response JSON Schemas", () => {
  it("are the ones generated from the model, under the ids the documents name", () => {
    for (const [file, generated, id] of [
      [published.v2, jobResponseJsonSchema(), JOB_RESPONSE_SCHEMA_ID],
      [published.v1, jobResponseV1JsonSchema(), JOB_RESPONSE_V1_SCHEMA_ID]
    ] as const) {
      if (process.env["UPDATE_SCHEMAS"] !== undefined) writeFileSync(file, `${JSON.stringify(generated, null, 2)}\n`)
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(generated)
      expect(generated["$id"]).toBe(id)
    }
  })

  it("v2 accepts what the engine makes, with and without a job order, completed and failed", () => {
    const base = { responseId: "jo-1-response", jobOrderId: "jo-1", startTime: 1_746_086_400_000, endTime: 1_746_086_460_000, data: { verify: { torque: 86 } } }
    const made = [
      makeJobResponse({ ...base, state: JobStates.Ended_Completed, jobOrder }),
      makeJobResponse({ ...base, state: JobStates.Aborted, error: "spindle jammed" }),
      makeJobResponse({ ...base, state: JobStates.Ended_Completed, data: {} })
    ]
    for (const response of made) expect(v2Accepts(JSON.parse(JSON.stringify(response))), ajv.errorsText(v2Accepts.errors)).toBe(true)
    expect(made[0]!.EquipmentActuals).toEqual([{ ID: "station-7" }])
  })

  it("v2 accepts every document the decoder gives, from either form (seeded)", () => {
    fc.assert(
      fc.property(fc.oneof(v1Document as fc.Arbitrary<unknown>, v2Candidate, v1Candidate), (value) => {
        const decoded = decodeJobResponse(value)
        if (Result.isSuccess(decoded)) expect(v2Accepts(JSON.parse(JSON.stringify(decoded.success))), ajv.errorsText(v2Accepts.errors)).toBe(true)
      }),
      { seed: 1024, numRuns: 400 }
    )
  })

  it("each schema agrees with its form's model on generated documents, good and bad (seeded)", () => {
    fc.assert(
      fc.property(v2Candidate, (value) => {
        expect(v2Accepts(value), JSON.stringify(value)).toBe(isV2(value))
      }),
      { seed: 4711, numRuns: 500 }
    )
    fc.assert(
      fc.property(v1Candidate, (value) => {
        expect(v1Accepts(value), JSON.stringify(value)).toBe(isV1(value))
      }),
      { seed: 4712, numRuns: 500 }
    )
  })

  it("v1 accepts an old document and v2 refuses it; neither takes the other's form", () => {
    const old = { ID: "r", JobOrderID: "j", StartTime: "2025-05-01T08:00:00.000Z", EndTime: "2025-05-01T08:01:00.000Z", JobState: "Aborted", Data: {}, Error: "e" }
    const current = JSON.parse(JSON.stringify(Result.getOrThrow(decodeJobResponse(old))))
    expect([v1Accepts(old), v2Accepts(old)]).toEqual([true, false])
    expect([v1Accepts(current), v2Accepts(current)]).toEqual([false, true])
  })
})
