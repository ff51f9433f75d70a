import { readFileSync } from "node:fs"
import { Result } from "effect"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { describe, expect, it } from "vitest"
import { parseSchemaId, payloadSchemaId, payloadSchemas, SCHEMA_BASE, schemaFile } from "@microdcs/contract"
import { ConfigEventTypes, type JobControlRequest, parseRequest } from "@microdcs/job-control"
import { MethodEventTypes, QueryEventTypes } from "@microdcs/job-state"
import { parseJournalConfig } from "@microdcs/journal"
import { eventConditions, RECIPE_SCHEMA_ID, RECIPE_SCHEMA_ID_V1_1, recipeJsonSchema } from "@microdcs/sfc"
import { parseTriggerInput } from "@microdcs/store"

/**
 * Every payload schema is valid JSON Schema 2020-12 (each compiles with ajv in strict mode, the
 * ones it references beside it), is named by an id of the contract's form, and says yes and no
 * where the island's own parsers do, for the repository's fixtures and for broken variants.
 */

const schemas = payloadSchemas()
const ajv = new Ajv2020({ strict: true, allErrors: true })
addFormats.default(ajv)
for (const schema of Object.values(schemas)) ajv.addSchema(schema)

const accepts = (name: string, value: unknown): boolean => ajv.validate(payloadSchemaId(name), value) as boolean
const fixture = (path: string): Record<string, unknown> => JSON.parse(readFileSync(new URL(`../../../${path}`, import.meta.url), "utf8")) as Record<string, unknown>

/** What job control's parser says of a request of `type` with `data` (and `method`). */
const islandAccepts = (type: string, data: unknown, method?: string): boolean => {
  const request: JobControlRequest = { id: "r-1", source: "urn:test", type, subject: "line-1", data, extensions: method === undefined ? {} : { method } }
  const parsed = parseRequest(request)
  return parsed !== undefined && Result.isSuccess(parsed.command)
}

describe("the payload schemas", () => {
  it("compile with ajv (2020-12, strict), each with the schemas it references", () => {
    const problems = Object.keys(schemas).flatMap((id) => {
      try {
        return ajv.getSchema(id) === undefined ? [`${id}: not found`] : []
      } catch (error) {
        return [`${id}: ${String(error)}`]
      }
    })
    expect(problems).toEqual([])
  })

  it("are named by ids of the contract's form, the recipe's among them, each published at its own path", () => {
    for (const [id, schema] of Object.entries(schemas)) {
      expect(schema["$id"]).toBe(id)
      expect(schema["$schema"]).toBe("https://json-schema.org/draft/2020-12/schema")
      expect(parseSchemaId(id), id).toBeDefined()
    }
    expect(RECIPE_SCHEMA_ID.startsWith(SCHEMA_BASE)).toBe(true)
    expect(schemas[RECIPE_SCHEMA_ID]).toEqual(recipeJsonSchema())
    expect(schemaFile(RECIPE_SCHEMA_ID)).toBe("docs/schemas/sfc-recipe/v1.0.0/schema.json")
    expect(schemas[RECIPE_SCHEMA_ID_V1_1]).toEqual(recipeJsonSchema("1.1.0"))
    expect(schemaFile(RECIPE_SCHEMA_ID_V1_1)).toBe("docs/schemas/sfc-recipe/v1.1.0/schema.json")
    expect(schemaFile(payloadSchemaId("job-response"))).toBe("docs/schemas/job-response/v2.0.0/schema.json")
  })

  it("accept the repository's fixtures, as the island does", () => {
    const order = fixture("apps/island-daemon/fixtures/job-order.json")
    expect([accepts("job-order-request", { JobOrder: order }), islandAccepts(MethodEventTypes.Store, { JobOrder: order })]).toEqual([true, true])
    for (const file of ["apps/island-daemon/fixtures/work-master-axle.json", "apps/island-daemon/fixtures/work-master-axle-toolcheck.json"]) {
      expect([accepts("work-master", fixture(file)), islandAccepts(ConfigEventTypes.workmaster, fixture(file))], file).toEqual([true, true])
    }
    // The same recipe under v1.1.0, with a step's and the job's time limits.
    const axle = fixture("apps/island-daemon/fixtures/work-master-axle.json")
    const data = axle["data"] as { Steps: ReadonlyArray<object> }
    const v11 = { ...axle, dataschema: RECIPE_SCHEMA_ID_V1_1, data: { ...data, MaxJobDuration: "2h", Steps: data.Steps.map((step) => ({ ...step, MaxDuration: "5min" })) } }
    expect([accepts("work-master", v11), islandAccepts(ConfigEventTypes.workmaster, v11)]).toEqual([true, true])
    const journal = fixture("apps/island-daemon/fixtures/journal-torque.json")
    expect([accepts("journal-config", journal), "config" in parseJournalConfig("line-1", journal, eventConditions)]).toEqual([true, true])
  })

  it("refuse what the island refuses", () => {
    const workMaster = fixture("apps/island-daemon/fixtures/work-master-axle.json")
    const requests: ReadonlyArray<readonly [string, string, unknown, string?]> = [
      ["job-order-request", MethodEventTypes.Store, { JobOrder: { Priority: 1 } }],
      ["job-order-request", MethodEventTypes.Store, { JobOrder: { JobOrderID: "" } }],
      ["job-order-request", MethodEventTypes.Store, { JobOrder: { JobOrderID: "jo\t1" } }],
      ["job-order-request", MethodEventTypes.Update, { JobOrder: { JobOrderID: "jo-1", WorkMasterID: [{}] } }],
      ["job-order-request", MethodEventTypes.Store, { JobOrder: { JobOrderID: "jo-1", EquipmentRequirements: [{ Name: "x" }] } }],
      ["job-order-id-request", MethodEventTypes.Start, { JobOrderID: 7 }],
      ["job-order-id-request", MethodEventTypes.Start, { JobOrderID: "jo-1", Comment: 3 }],
      ["job-responses-by-state-request", QueryEventTypes.RequestJobResponseByJobOrderState, { JobOrderState: "Done" }],
      ["job-responses-by-state-request", QueryEventTypes.RequestJobResponseByJobOrderState, { JobOrderState: "Running", PageSize: 0 }],
      ["job-responses-by-state-request", QueryEventTypes.RequestJobResponseByJobOrderState, { Cursor: "0" }],
      ["config-materialclass", ConfigEventTypes.materialclass, [{ ID: "axle" }]],
      ["config-equipment", ConfigEventTypes.equipment, []],
      ["work-master", ConfigEventTypes.workmaster, { ...workMaster, data: { ...(workMaster["data"] as object), Steps: "Init" } }],
      ["work-master", ConfigEventTypes.workmaster, { dataschema: RECIPE_SCHEMA_ID }],
      ["work-master", ConfigEventTypes.workmaster, { ...workMaster, dataschema: RECIPE_SCHEMA_ID_V1_1, data: { ...(workMaster["data"] as object), MaxJobDuration: "2 h" } }],
      ["job-acceptance", ConfigEventTypes.jobacceptance, { Limit: -1 }],
      ["job-acceptance", ConfigEventTypes.jobacceptance, { Maximum: 3 }]
    ]
    for (const [name, type, data] of requests) expect([accepts(name, data), islandAccepts(type, data)], `${name}: ${JSON.stringify(data)}`).toEqual([false, false])

    const journal = fixture("apps/island-daemon/fixtures/journal-torque.json")
    for (const bad of [{ ...journal, name: "1x" }, { ...journal, types: [] }, { ...journal, retention: { maxAge: "a week" } }, { ...journal, colour: "red" }, { ...journal, compression: "zip" }]) {
      expect([accepts("journal-config", bad), "config" in parseJournalConfig("line-1", bad, eventConditions)], JSON.stringify(bad)).toEqual([false, false])
    }
    const trigger = { id: "t-1", type: "com.example.bin.empty.v1", workMasterId: "wm-1" }
    expect([accepts("trigger", trigger), "trigger" in parseTriggerInput({ ...trigger, scope: "line-1" })]).toEqual([true, true])
    for (const bad of [{ ...trigger, id: "-t" }, { ...trigger, type: " " }, { ...trigger, priority: 1.5 }, { ...trigger, requirements: { Tools: [] } }, { ...trigger, enabled: "yes" }, { ...trigger, owner: "me" }]) {
      expect([accepts("trigger", bad), "trigger" in parseTriggerInput({ ...bad, scope: "line-1" })], JSON.stringify(bad)).toEqual([false, false])
    }
  })
})
