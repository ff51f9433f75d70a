import { describe, expect, it } from "@effect/vitest"
import { eventKeyAt, indexesOf } from "@microdcs/sfc"
import { keyText } from "../src/engine/CorrelationKeys.js"
import { Job, JOB, pull, recipeOf, T0 } from "./EngineKit.js"
import { recipeBuilders } from "../src/testing.js"

// Pull events routed by a correlation key: the key each wait expects, fixed at start, and which
// waiting action an event takes.

const { linearJson } = recipeBuilders("")
const SCAN = "com.example.scan"
const v1_1 = (steps: ReadonlyArray<string>, actions: ReadonlyArray<object>) => recipeOf({ ...linearJson(steps, actions), SchemaVersion: "1.1.0" })
const byLot = (name: string, step: string, extra: Record<string, unknown> = {}) =>
  pull(name, step, { TypeId: SCAN, CorrelationKey: { Attribute: "lotid" }, Matches: "order.MaterialRequirements.0.MaterialLotID", ...extra })
const order = { JobOrderID: JOB, MaterialRequirements: [{ MaterialLotID: "lot-7" }], JobOrderParameters: [{ ID: "Carrier", Value: { Type: 12, Body: "c-3" } }, { ID: "Count", Value: 4 }] }
const scan = (attributes: Record<string, string>, data: unknown = {}) => ({ type: "event" as const, eventType: SCAN, attributes, data })

describe("engine: waits by correlation key", () => {
  it("fixes each keyed action's expected key at start and waits by key, not by type", () => {
    const recipe = v1_1(["Load", "Done"], [
      byLot("scan", "Load"),
      pull("carrier", "Load", { TypeId: "com.example.carrier", CorrelationKey: { DataField: "carrier.id" }, Matches: "parameter.Carrier" }),
      pull("count", "Load", { TypeId: "com.example.count", CorrelationKey: { DataField: "n" }, Matches: "parameter.Count" }),
      pull("own", "Load", { TypeId: "com.example.own", CorrelationKey: { Attribute: "jobid" }, Matches: "jobid" }),
      pull("plain", "Done")
    ])
    const job = new Job(recipe, T0, { order })
    expect(job.state.correlationKeys).toEqual({ scan: "lot-7", carrier: "c-3", count: "4", own: JOB })
    expect(job.last.waitsAdd).toEqual([])
    expect(job.last.keyedWaitsAdd).toEqual([
      { typeId: SCAN, key: { place: "attribute.lotid", value: "lot-7" }, since: T0 },
      { typeId: "com.example.carrier", key: { place: "data.carrier.id", value: "c-3" }, since: T0 },
      { typeId: "com.example.count", key: { place: "data.n", value: "4" }, since: T0 },
      { typeId: "com.example.own", key: { place: "attribute.jobid", value: JOB }, since: T0 }
    ])
    expect(indexesOf(job.state).keyedWaits).toEqual(job.last.keyedWaitsAdd)
  })

  it("applies an event whose key is the expected one and ignores one with another key or none", () => {
    const job = new Job(v1_1(["Load"], [byLot("scan", "Load")]), T0, { order })
    for (const other of [scan({ lotid: "lot-8" }), scan({ lotid2: "lot-7" })]) {
      const out = job.apply(other, T0 + 10)
      expect(out.changed).toBe(false)
      expect(out.note).toBe(`no action is waiting for this event (${SCAN})`)
    }
    const out = job.apply(scan({ lotid: "lot-7" }, { ok: true }), T0 + 20)
    expect(out.changed).toBe(true)
    expect(job.state.status).toBe("completed")
    expect(job.state.results).toEqual({ scan: { ok: true } })
    expect(out.keyedWaitsRemove).toEqual([{ typeId: SCAN, key: { place: "attribute.lotid", value: "lot-7" } }])
  })

  it("gives an event to the keyed action its key matches before an action of the type that names no key", () => {
    const job = new Job(v1_1(["Load"], [pull("any", "Load", { TypeId: SCAN }), byLot("mine", "Load")]), T0, { order })
    expect(job.last.waitsAdd).toEqual([{ typeId: SCAN, since: T0 }])
    job.apply(scan({ lotid: "lot-7" }, "mine"), T0 + 10)
    job.apply(scan({ lotid: "lot-8" }, "any"), T0 + 20)
    expect(job.state.results).toEqual({ mine: "mine", any: "any" })
  })

  it("moves a keyed wait that ends and starts again in one write behind the jobs that waited longer", () => {
    const job = new Job(v1_1(["First", "Second"], [byLot("first", "First"), byLot("second", "Second")]), T0, { order })
    const out = job.apply(scan({ lotid: "lot-7" }), T0 + 50)
    expect(out).toMatchObject({ keyedWaitsAdd: [], keyedWaitsRemove: [], keyedWaitsMove: [{ typeId: SCAN, key: { place: "attribute.lotid", value: "lot-7" }, since: T0 + 50 }] })
  })

  it("fails the job at start when the job order does not give a key's value, naming the action and the field", () => {
    const job = new Job(v1_1(["Load"], [byLot("scan", "Load")]), T0, { order: { JobOrderID: JOB } })
    expect(job.state.status).toBe("failed")
    expect(job.state.error).toBe(
      "action scan: its correlation key must equal order.MaterialRequirements.0.MaterialLotID, which the job order does not give as a string, number or boolean of 1 to 256 bytes"
    )
    expect(job.last.keyedWaitsAdd).toEqual([])
    expect(job.last.outbox.map((e) => e.type === "joborder" ? e.trigger : e.type)).toEqual(["Run", "Abort", "jobresponse"])
  })

  it("reads keys as text: strings, finite numbers and booleans; own fields and array indexes only", () => {
    expect([keyText("a"), keyText(4), keyText(true), keyText(""), keyText(null), keyText({}), keyText(Number.NaN), keyText("x".repeat(257))]).toEqual(["a", "4", "true", undefined, undefined, undefined, undefined, undefined])
    const event = { attributes: { lotid: "L" }, data: { items: [{ lot: 7 }], toString: undefined } }
    expect(eventKeyAt("attribute.lotid", event)).toBe("L")
    expect(eventKeyAt("attribute.constructor", event)).toBeUndefined()
    expect(eventKeyAt("data.items.0.lot", event)).toBe("7")
    expect(eventKeyAt("data.items.x", event)).toBeUndefined()
    expect(eventKeyAt("data.items.length", event)).toBeUndefined()
    expect(eventKeyAt("elsewhere.lotid", event)).toBeUndefined()
  })
})
