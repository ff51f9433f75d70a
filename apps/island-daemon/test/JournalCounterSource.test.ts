import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { inject } from "vitest"
import { makeCloudEvent } from "@microdcs/cloudevents-mqtt"
import { Journal, JournalClock, JournalOptions } from "@microdcs/journal"
import { type CounterRequest, CounterSource } from "@microdcs/sfc-runtime"
import { ValkeyLayer } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { journalConfigProblems } from "../src/JournalConfigRequests.js"
import { eventConditions } from "@microdcs/sfc"
import { JournalCounterSource } from "../src/JournalCounterSource.js"
import { journalEventOf, journalStationEvents } from "../src/IslandJournal.js"
import { makeMetrics } from "../src/Metrics.js"

/**
 * The daemon's journal pieces that need no daemon: the counter source the engine reads (over a
 * real Valkey, the journal's clock fixed), the `when` language, and the configuration checks
 * made before anything is written.
 */

const NOW = Date.UTC(2026, 0, 5, 10, 0, 0)
const SCOPE = "line-1"
const TORQUE = "com.example.station.torque.v1"

const torqueJournal = {
  name: "torque",
  types: [TORQUE],
  searchKeys: [
    { name: "tool", path: "data.tool_id" },
    { name: "equipment", path: "subject" },
    { name: "job", path: "jobid" }
  ],
  retention: { maxAge: "1d" },
  compression: "lz4",
  counters: [
    { name: "nok_torque_1h", searchKey: "tool", window: "1h", resolution: "minute", when: "!torque_ok" },
    { name: "station_torque_1h", searchKey: "equipment", window: "1h", resolution: "minute" },
    { name: "job_torque_1h", searchKey: "job", window: "1h", resolution: "minute" }
  ]
}

const layer = () =>
  JournalCounterSource.pipe(
    Layer.provideMerge(Journal.Default),
    Layer.provide(Layer.mergeAll(JournalClock.fixed(() => NOW), JournalOptions.layer({ conditions: eventConditions }))),
    Layer.provide(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("jcs") }))
  )

let serial = 0
const torque = (tool: string, ok: boolean, job = "jo-1", station = "station-7") =>
  journalEventOf({
    specversion: "1.0",
    id: `evt-${++serial}`,
    source: "urn:test:station-7",
    type: TORQUE,
    time: new Date(NOW - 60_000).toISOString(),
    subject: station,
    data: { tool_id: tool, torque_ok: ok, torque_nm: ok ? 85 : 78 },
    extensions: { jobid: job }
  })

const request = (counters: ReadonlyArray<string>, results: Record<string, unknown>, jobOrder: unknown = undefined): CounterRequest => ({
  scope: SCOPE,
  jobOrderId: "jo-1",
  source: "VerifyTorque",
  counters,
  results,
  jobOrder
})

describe("the journal counter source", () => {
  it.effect("reads a counter by the search-key value in the step's results, counting only what its `when` holds for", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.configure(SCOPE, torqueJournal)
      for (const ok of [false, false, true]) yield* journal.record(torque("nutrunner-3", ok), { scope: SCOPE })
      yield* journal.record(torque("nutrunner-9", false), { scope: SCOPE })
      const source = yield* CounterSource
      expect(yield* source.read(request(["nok_torque_1h"], { verify: { tool_id: "nutrunner-3", torque_ok: false } }))).toEqual({ nok_torque_1h: 2 })
      expect(yield* source.read(request(["nok_torque_1h"], { verify: { tool_id: "nutrunner-9" } }))).toEqual({ nok_torque_1h: 1 })
      // A value with no entries counts 0; a field named like the search key works too.
      expect(yield* source.read(request(["nok_torque_1h"], { verify: { tool: "nutrunner-4" } }))).toEqual({ nok_torque_1h: 0 })
    }).pipe(Effect.provide(layer()))
  )

  it.effect("takes the value from the job order when the results have none: requirements by the key's name, the job id for `jobid`", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.configure(SCOPE, torqueJournal)
      yield* journal.record(torque("nutrunner-3", false, "jo-1", "station-7"), { scope: SCOPE })
      yield* journal.record(torque("nutrunner-3", true, "jo-2", "station-7"), { scope: SCOPE })
      const jobOrder = {
        JobOrderID: "jo-1",
        EquipmentRequirements: [{ ID: "station-7" }],
        PhysicalAssetRequirements: [{ ID: "nutrunner-3" }]
      }
      const source = yield* CounterSource
      expect(yield* source.read(request(["nok_torque_1h", "station_torque_1h", "job_torque_1h"], { position: { done: "position" } }, jobOrder))).toEqual({
        nok_torque_1h: 1,
        station_torque_1h: 2,
        job_torque_1h: 1
      })
    }).pipe(Effect.provide(layer()))
  )

  it.effect("leaves out a counter the scope does not have or whose key has no value, so the condition names it", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.configure(SCOPE, torqueJournal)
      // Every scope read, as the daemon does at start: a scope without journals is then known to have none.
      yield* journal.reload()
      const source = yield* CounterSource
      expect(yield* source.read(request(["no_such_counter", "nok_torque_1h"], { verify: { torque_ok: true } }))).toEqual({})
      expect(yield* source.read({ ...request(["nok_torque_1h"], { verify: { tool_id: "nutrunner-3" } }), scope: "other-scope" })).toEqual({})
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a counter of a scope whose configurations are not loaded yet is unavailable (the engine waits), not left out", () =>
    Effect.gen(function* () {
      const source = yield* CounterSource
      const unread = yield* Effect.flip(source.read(request(["nok_torque_1h"], { verify: { tool_id: "nutrunner-3" } })))
      expect(unread).toMatchObject({ _tag: "CounterUnavailable", counter: "nok_torque_1h" })
      expect(unread.message).toContain("JournalNotLoaded")
      const journal = yield* Journal
      yield* journal.configure(SCOPE, torqueJournal)
      expect(yield* source.read(request(["nok_torque_1h"], { verify: { tool_id: "nutrunner-3" } }))).toEqual({ nok_torque_1h: 0 })
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a station event in a scope whose configurations are not loaded is counted and logged as not journaled, never passed over in silence", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      const metrics = makeMetrics()
      const logged: Array<string> = []
      const logger = Logger.make(({ message }) => void logged.push(String(message)))
      const hook = journalStationEvents(journal, metrics)
      const event = makeCloudEvent({ source: "urn:test:station-7", type: TORQUE, subject: SCOPE, data: { tool_id: "nutrunner-3", torque_ok: false } })
      yield* hook(event, SCOPE).pipe(Effect.provide(Logger.layer([logger])))
      expect(logged).toEqual([expect.stringContaining("not journaled")])
      expect(yield* Effect.promise(() => metrics.scrape())).toMatch(/microdcs_journal_total\{operation="record",outcome="failed"\} 1/)

      yield* journal.configure(SCOPE, torqueJournal)
      const started = yield* hook(event, SCOPE)
      if (Effect.isEffect(started)) yield* started
      expect(yield* journal.counter(SCOPE, "torque", "nok_torque_1h", "nutrunner-3")).toBe(1)
    }).pipe(Effect.provide(layer()))
  )
})

describe("the journal configuration event, checked before anything is written", () => {
  const event = (data: unknown, extensions: Record<string, string> = {}, subject: string | undefined = SCOPE) => ({
    id: "e-1",
    source: "urn:test:mes",
    type: "com.github.aschamberger.ISA95-JOBCONTROL_V2.config.journal.v1",
    subject,
    data,
    extensions
  })

  it("lists every problem of a bad configuration, of the method and of the subject", () => {
    const problems = journalConfigProblems(
      event({ name: "", types: [], searchKeys: [{ name: "tool" }], retention: { maxAge: "soon" }, counters: [{ name: "c", searchKey: "nope", window: "1h", resolution: "week" }] })
    )
    expect(problems.length).toBeGreaterThanOrEqual(5)
    expect(journalConfigProblems(event({ name: "x" }, { method: "PATCH" }, ""))).toEqual([
      "subject must name the scope",
      "method must be PUT or DELETE, got 'PATCH'"
    ])
    expect(journalConfigProblems(event({}, { method: "DELETE" }))).toEqual(["a DELETE names the journal in data.name"])
    expect(journalConfigProblems(event({ name: "torque" }, { method: "delete" }))).toEqual([])
    expect(journalConfigProblems(event(torqueJournal))).toEqual([])
  })
})
