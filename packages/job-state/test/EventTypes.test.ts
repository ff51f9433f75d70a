import { describe, expect, it } from "vitest"
import { Option } from "effect"
import {
  methodPayload,
  MethodEventTypes,
  methods,
  parseRequestType,
  queries,
  QueryEventTypes,
  triggers
} from "@microdcs/job-state"

describe("job control event types", () => {
  it("lists the 11 MES methods, without the internal triggers", () => {
    expect(methods).toEqual(triggers.filter((t) => t !== "Run" && t !== "Complete"))
    expect(methods).toHaveLength(11)
  })

  it("names methods under ISA95-JOBCONTROL_V2 (v2) and queries under Machinery.Jobs (v1)", () => {
    expect(MethodEventTypes.Store).toBe("org.opcfoundation.ISA95-JOBCONTROL_V2.Store.v2")
    expect(MethodEventTypes.RevokeStart).toBe("org.opcfoundation.ISA95-JOBCONTROL_V2.RevokeStart.v2")
    expect(QueryEventTypes.RequestJobResponseByJobOrderID).toBe(
      "org.opcfoundation.Machinery.Jobs.RequestJobResponseByJobOrderID.v1"
    )
    expect(QueryEventTypes.RequestJobResponseByJobOrderState).toBe(
      "org.opcfoundation.Machinery.Jobs.RequestJobResponseByJobOrderState.v1"
    )
    expect(Object.keys(MethodEventTypes)).toEqual(methods)
  })

  it("parses every method and query type back", () => {
    for (const method of methods) {
      expect(parseRequestType(MethodEventTypes[method])).toEqual(Option.some({ kind: "method", method }))
    }
    for (const query of queries) {
      expect(parseRequestType(QueryEventTypes[query])).toEqual(Option.some({ kind: "query", query }))
    }
  })

  it.each([
    "org.opcfoundation.ISA95-JOBCONTROL_V2.Run.v2",
    "org.opcfoundation.ISA95-JOBCONTROL_V2.Complete.v2",
    "org.opcfoundation.ISA95-JOBCONTROL_V2.Store.v1",
    "org.opcfoundation.ISA95-JOBCONTROL_V2.store.v2",
    "org.opcfoundation.Machinery.Jobs.Store.v1",
    "org.opcfoundation.ISA95-JOBCONTROL_V2.RequestJobResponseByJobOrderID.v2",
    "org.opcfoundation.Machinery.Jobs.RequestJobResponseByJobOrderID.v2",
    "com.github.aschamberger.ISA95-JOBCONTROL_V2.config.equipment.v1",
    " org.opcfoundation.ISA95-JOBCONTROL_V2.Store.v2",
    ""
  ])("does not parse %j", (type) => {
    expect(Option.isNone(parseRequestType(type))).toBe(true)
  })

  it("knows which methods carry a whole job order", () => {
    expect(methods.filter((m) => methodPayload[m] === "JobOrder")).toEqual(["Store", "StoreAndStart", "Update"])
  })
})
