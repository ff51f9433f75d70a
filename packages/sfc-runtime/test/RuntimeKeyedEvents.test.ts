import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Result } from "effect"
import { COUNTER_RECHECK_MS, RECIPE_SCHEMA_ID_V1_1, validateRecipe } from "@microdcs/sfc"
import { Executions, SfcEvents, startJob, type StationEvent } from "@microdcs/sfc-runtime"
import { SfcStateDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { snapshot } from "@microdcs/testkit"
import { putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { jobOrderFor, linearRecipe, observer, pull, SCOPE } from "./RuntimeKit.js"

/**
 * Pull events routed by a correlation key (recipe schema v1.1.0): each job waits under the key it
 * expects, and an event goes to the job whose key it carries, whatever the order they waited in.
 */

const LOT_SCAN = "com.example.lotscan.v1"
const SOURCE = "urn:test:station"
const byLot = pull("scan", "Scan", { TypeId: LOT_SCAN, CorrelationKey: { Attribute: "lotid" }, Matches: "order.MaterialRequirements.0.MaterialLotID" })
const workMaster = { ID: "wm-lot", Description: "scans by lot", dataschema: RECIPE_SCHEMA_ID_V1_1, data: linearRecipe(["Scan"], [byLot]) }
const lotOrder = (id: string, lot: string) => ({ ...jobOrderFor(id, "wm-lot"), MaterialRequirements: [{ MaterialLotID: lot, Quantity: "1" }] })
const scanOf = (id: string, lot: string): StationEvent => ({ scope: SCOPE, source: SOURCE, id, type: LOT_SCAN, attributes: { lotid: lot }, data: { scanned: lot } })


describe("SFC runtime: events routed by correlation key", () => {
  it.live("two jobs wait for one type under different keys; events in the other order reach the job their key names", () => {
    const prefix = randomPrefix("sfc-keyed")
    return Effect.gen(function* () {
      const events = yield* SfcEvents
      const states = yield* SfcStateDao
      const executions = yield* Executions
      yield* putWorkMaster(SCOPE, workMaster)
      yield* putJobOrder(SCOPE, lotOrder("jo-lot-a", "lot-a"))
      yield* putJobOrder(SCOPE, lotOrder("jo-lot-b", "lot-b"))
      // Started from the stored job orders, a first: without keys, a would get the first event.
      expect(yield* startJob("jo-lot-a", { maxAttempts: 3, counterRecheckMs: COUNTER_RECHECK_MS })).toBe("started")
      expect(yield* startJob("jo-lot-b", { maxAttempts: 3, counterRecheckMs: COUNTER_RECHECK_MS })).toBe("started")
      expect(yield* states.keyPlaces(SCOPE, LOT_SCAN)).toEqual(["attribute.lotid"])
      expect((yield* states.keyedWaiting(SCOPE, { typeId: LOT_SCAN, key: { place: "attribute.lotid", value: "lot-a" } }, 3)).map((j) => j.jobId)).toEqual(["jo-lot-a"])
      expect(yield* states.waiting(SCOPE, LOT_SCAN)).toEqual([])

      expect(yield* events.ingest(scanOf("evt-b", "lot-b"))).toEqual({ _tag: "Applied", jobId: "jo-lot-b" })

      // A key no job expects changes nothing anywhere, and says which key it was.
      const before = yield* snapshot
      expect(yield* events.ingest(scanOf("evt-x", "lot-x"))).toEqual({ _tag: "Ignored", reason: "no job waits for this event's key (attribute.lotid = lot-x)" })
      expect(yield* events.ingest({ ...scanOf("evt-none", "lot-a"), attributes: {} })).toEqual({ _tag: "Ignored", reason: "no job waits for this event type" })
      expect(yield* snapshot).toEqual(before)

      // An event applied before is a duplicate, even though its job has moved on.
      expect(yield* events.ingest(scanOf("evt-b", "lot-b"))).toEqual({ _tag: "Duplicate", jobId: "jo-lot-b" })
      expect(yield* events.ingest(scanOf("evt-a", "lot-a"))).toEqual({ _tag: "Applied", jobId: "jo-lot-a" })

      for (const [jobId, lot] of [["jo-lot-a", "lot-a"], ["jo-lot-b", "lot-b"]] as const) {
        const done = Option.getOrThrow(yield* executions.load(jobId)).state
        expect(done.status).toBe("completed")
        expect(done.results).toEqual({ scan: { scanned: lot } })
      }
      // No keyed wait is left: the type has no key place any more.
      expect(yield* states.keyPlaces(SCOPE, LOT_SCAN)).toEqual([])
    }).pipe(Effect.provide(observer(prefix)))
  })

  it.live("a data field key beside a job that names no key: each takes its own events; a job named by jobid still needs its key", () => {
    const prefix = randomPrefix("sfc-keyed")
    const TRAY = "com.example.tray.v1"
    const keyed = Result.getOrThrow(validateRecipe({ ...linearRecipe(["Tray"], [pull("tray", "Tray", { TypeId: TRAY, CorrelationKey: { DataField: "tray.job" }, Matches: "jobid" })]), SchemaVersion: "1.1.0" }))
    const plain = Result.getOrThrow(validateRecipe(linearRecipe(["Tray"], [pull("tray", "Tray", { TypeId: TRAY })])))
    const tray = (id: string, job: string, jobId?: string): StationEvent => ({ scope: SCOPE, source: SOURCE, id, type: TRAY, data: { tray: { job } }, ...(jobId !== undefined ? { jobId } : {}) })
    return Effect.gen(function* () {
      const events = yield* SfcEvents
      const executions = yield* Executions
      yield* executions.create({ jobId: "jo-plain", scope: SCOPE, workMasterId: "wm", recipe: plain })
      yield* executions.create({ jobId: "jo-tray", scope: SCOPE, workMasterId: "wm", recipe: keyed })
      // Named by jobid but carrying another key: the keyed action does not take it.
      expect(yield* events.ingest(tray("evt-1", "jo-other", "jo-tray"))).toEqual({ _tag: "Ignored", reason: "the job waits for no such event" })
      // Its key matches no keyed wait: it goes to the job that waits by type alone.
      expect(yield* events.ingest(tray("evt-2", "jo-other"))).toEqual({ _tag: "Applied", jobId: "jo-plain" })
      expect(yield* events.ingest(tray("evt-3", "jo-tray"))).toEqual({ _tag: "Applied", jobId: "jo-tray" })
      expect(Option.getOrThrow(yield* executions.load("jo-tray")).state.results).toEqual({ tray: { tray: { job: "jo-tray" } } })
    }).pipe(Effect.provide(observer(prefix)))
  })
})
