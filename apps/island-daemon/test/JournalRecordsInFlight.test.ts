import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { inject } from "vitest"
import { Journal, JournalClock, JournalOptions } from "@microdcs/journal"
import { type CounterRequest, CounterSource } from "@microdcs/sfc-runtime"
import { ValkeyLayer } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { eventConditions } from "@microdcs/sfc"
import { JournalCounterSource } from "../src/JournalCounterSource.js"
import { journalEventOf } from "../src/IslandJournal.js"
import { JournalRecordsInFlight } from "../src/JournalRecordsInFlight.js"

/**
 * Station events are journaled while the engine ingests them: the counter source waits for the
 * records in flight in its scope, so a counter read right after an event still counts it.
 */

const NOW = Date.UTC(2026, 0, 5, 10, 0, 0)
const SCOPE = "line-1"
const TORQUE = "com.example.station.torque.v1"

const torqueJournal = {
  name: "torque",
  types: [TORQUE],
  searchKeys: [{ name: "tool", path: "data.tool_id" }],
  retention: { maxAge: "1d" },
  compression: "none",
  counters: [{ name: "nok_torque_1h", searchKey: "tool", window: "1h", resolution: "minute", when: "!torque_ok" }]
}

const layer = () =>
  JournalCounterSource.pipe(
    Layer.provideMerge(Layer.merge(Journal.Default, JournalRecordsInFlight.layer)),
    Layer.provide(Layer.mergeAll(JournalClock.fixed(() => NOW), JournalOptions.layer({ conditions: eventConditions }))),
    Layer.provide(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("jrf") }))
  )

const nok = (id: string) =>
  journalEventOf({
    specversion: "1.0",
    id,
    source: "urn:test:station-7",
    type: TORQUE,
    time: new Date(NOW - 60_000).toISOString(),
    subject: SCOPE,
    data: { tool_id: "nutrunner-3", torque_ok: false, torque_nm: 78 },
    extensions: { jobid: "jo-1" }
  })

const request = (scope: string): CounterRequest => ({
  scope,
  jobOrderId: "jo-1",
  source: "VerifyTorque",
  counters: ["nok_torque_1h"],
  results: { verify: { tool_id: "nutrunner-3", torque_ok: false } },
  jobOrder: undefined
})

describe("journal records in flight", () => {
  it.effect("a counter read waits for the records of its scope that are still being written, and counts them", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      const inFlight = yield* JournalRecordsInFlight
      const source = yield* CounterSource
      yield* journal.configure(SCOPE, torqueJournal)
      // Every scope read, as the daemon does at start: a scope without journals (line-2) is then known to have none.
      yield* journal.reload()
      // A record held back until the test lets it go: the store being slow, deterministically.
      const gate = yield* Deferred.make<void>()
      const recorded = Deferred.await(gate).pipe(Effect.andThen(journal.record(nok("evt-1"), { scope: SCOPE })), Effect.orDie, Effect.asVoid)
      const end = yield* inFlight.start(SCOPE, recorded)
      const read = yield* Effect.forkChild(source.read(request(SCOPE)))
      const ended = yield* Effect.forkChild(end)
      // Another scope has nothing in flight: its read does not wait.
      expect(yield* source.read(request("line-2"))).toEqual({})
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      // Neither has an exit yet: both still wait.
      expect(read.pollUnsafe()).toBeUndefined()
      expect(ended.pollUnsafe()).toBeUndefined()
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(read)).toEqual({ nok_torque_1h: 1 })
      yield* Fiber.join(ended)
      // Nothing in flight any more: a read goes straight to the journal.
      expect(yield* source.read(request(SCOPE))).toEqual({ nok_torque_1h: 1 })
    }).pipe(Effect.provide(layer()))
  )

  it.effect("a record that dies, or is still running when the registry closes, ends all the same: nobody waits for it forever", () =>
    Effect.gen(function* () {
      const inFlight = yield* JournalRecordsInFlight
      yield* yield* inFlight.start(SCOPE, Effect.die("the store went away"))
      yield* inFlight.settled(SCOPE)
      const scope = yield* Scope.make()
      // A registry of its own (fresh: a build inside the provided layer would share that one).
      const own = Context.get(yield* Layer.buildWithScope(Layer.fresh(JournalRecordsInFlight.layer), scope), JournalRecordsInFlight)
      const end = yield* own.start(SCOPE, Effect.never)
      const waiting = yield* Effect.forkChild(own.settled(SCOPE))
      yield* Scope.close(scope, Exit.void)
      yield* end
      yield* Fiber.join(waiting)
    }).pipe(Effect.provide(layer()))
  )
})
