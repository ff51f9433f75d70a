import { Result } from "effect"
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { methods, MethodEventTypes, queries, QueryEventTypes } from "@microdcs/job-state"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { configKinds, ConfigEventTypes, type JobControlRequest, parseRequest, replyTypeOf, scopeOf } from "@microdcs/job-control"

const req = (type: string, data: unknown, subject: string | undefined = "s", extensions: Record<string, string> = {}): JobControlRequest => ({
  id: "1",
  source: "urn:test",
  type,
  subject,
  data,
  extensions
})

/** Payloads near the real shapes, so the fuzzing reaches the nested readers, not only the first check. */
const value = fc.anything({ withBigInt: true, withNullPrototype: true, maxDepth: 2 })
const entry = fc.dictionary(fc.constantFrom("ID", "MaterialClassID", "MaterialDefinitionID", "Text", "Locale", "StateText"), fc.oneof(value, fc.string()))
const field = fc.oneof(value, fc.array(entry, { maxLength: 4 }), fc.constant(RECIPE_SCHEMA_ID), fc.string())
const jobOrderFields = ["JobOrderID", "Priority", "WorkMasterID", "EquipmentRequirements", "MaterialRequirements", "PersonnelRequirements", "PhysicalAssetRequirements"]
const jobOrder = fc.dictionary(fc.constantFrom(...jobOrderFields), field)
const payloadFields = ["JobOrder", "JobOrderID", "Comment", "JobOrderState", "JobState", "Cursor", "PageSize", "ID", "Limit", "MaxDownloadableJobOrders", "dataschema", "data"]
const payload = fc.oneof(value, fc.array(entry, { maxLength: 3 }), fc.dictionary(fc.constantFrom(...payloadFields), fc.oneof(field, jobOrder)))

const allTypes = [
  ...methods.map((m) => MethodEventTypes[m]),
  ...queries.map((q) => QueryEventTypes[q]),
  ...configKinds.map((k) => ConfigEventTypes[k])
]

describe("parseRequest (pure)", () => {
  it("derives the reply type and the scope", () => {
    expect(replyTypeOf("org.opcfoundation.Machinery.Jobs.RequestJobResponseByJobOrderState.v1")).toBe(
      "org.opcfoundation.Machinery.Jobs.RequestJobResponseByJobOrderStateResponse.v1"
    )
    expect(scopeOf("line-1/station/3")).toBe("line-1")
    expect(scopeOf("line-1")).toBe("line-1")
    expect(scopeOf("/x")).toBeUndefined()
    expect(scopeOf(undefined)).toBeUndefined()
  })

  it("reads a Comment as text or as OPC UA LocalizedText (English first)", () => {
    const parsed = parseRequest(
      req(MethodEventTypes.Abort, { JobOrderID: "j", Comment: [{ Text: "Halt", Locale: "de" }, { Text: "Stop it", Locale: "en" }] })
    )
    expect(parsed?.command).toEqual(Result.succeed({ _tag: "StateMethod", method: "Abort", scope: "s", jobOrderId: "j", comment: "Stop it" }))
  })

  it("collects the referenced ids of a job order without repeats", () => {
    const parsed = parseRequest(
      req(MethodEventTypes.Store, {
        JobOrder: {
          JobOrderID: "j",
          WorkMasterID: [{ ID: "wm" }, { ID: "wm" }],
          MaterialRequirements: [{ MaterialClassID: "c1" }, { MaterialDefinitionID: "d1", MaterialClassID: null }, { MaterialLotID: "lot" }],
          EquipmentRequirements: [{ ID: "e1" }, { ID: "e1" }]
        }
      })
    )
    expect(Result.getOrThrow(parsed!.command)).toMatchObject({
      references: {
        lists: [
          { kind: "equipment", ids: ["e1"] },
          { kind: "materialclass", ids: ["c1"] },
          { kind: "materialdefinition", ids: ["d1"] }
        ],
        workMasters: ["wm"]
      }
    })
  })

  it("is total: any payload, subject and method attribute gives a command or a BadRequest, never a throw", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...allTypes),
        payload,
        fc.option(fc.string(), { nil: undefined }),
        fc.constantFrom("PUT", "DELETE", "post", ""),
        (type, data, subject, method) => {
          const parsed = parseRequest(req(type, data, subject, { method }))
          expect(parsed).toBeDefined()
          expect(Result.isResult(parsed!.command)).toBe(true)
        }
      ),
      { numRuns: 3000 }
    )
  })
})
