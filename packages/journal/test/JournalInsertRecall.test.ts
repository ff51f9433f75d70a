import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { dedupeHash } from "@microdcs/keyschema"
import { scriptHeaderProblems } from "@microdcs/lua-scripts"
import { Journal, journalScripts } from "@microdcs/journal"
import { journalLayer, movableClock, randomPrefix, raw, keyDump, torqueConfig, torqueEvent } from "./JournalKit.js"

// Issue 12, items 1, 3, 5: insert and recall across search keys, idempotent by the dedupe hash,
// all or nothing when any key holds another type.

const prefix = randomPrefix("journal")
const { clock, layer: clockLayer } = movableClock()
const layer = journalLayer(prefix, clockLayer)

describe("journal insert and recall", () => {
  it("every script has a header that documents its KEYS, ARGV and replies", () => {
    for (const script of journalScripts) expect(scriptHeaderProblems(script)).toEqual([])
  })

  it.effect("recalls entries by each search key, newest first, with limit and since", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.configure("line-1", torqueConfig)
      const t0 = clock.now
      const events = [
        torqueEvent(t0 - 3000, { tool: "nr-1", job: "job-a" }),
        torqueEvent(t0 - 2000, { tool: "nr-2", job: "job-a" }),
        torqueEvent(t0 - 1000, { tool: "nr-1", job: "job-b", torque: 26.1 })
      ]
      for (const event of events) expect((yield* journal.insert("line-1", "torque", event)).status).toBe("inserted")

      const byTool = yield* journal.recall("line-1", "torque", "tool", "nr-1")
      expect(byTool.map((e) => e.event)).toEqual([events[2], events[0]])
      expect(byTool.map((e) => e.id)).toEqual([dedupeHash(events[2]!.source, events[2]!.id), dedupeHash(events[0]!.source, events[0]!.id)])
      expect(byTool.map((e) => e.time)).toEqual([t0 - 1000, t0 - 3000])
      expect((yield* journal.recall("line-1", "torque", "job", "job-a")).map((e) => e.event)).toEqual([events[1], events[0]])
      expect((yield* journal.recall("line-1", "torque", "equipment", "cell-4")).length).toBe(3)
      expect((yield* journal.recall("line-1", "torque", "equipment", "cell-4", { limit: 2 })).map((e) => e.event)).toEqual([events[2], events[1]])
      expect((yield* journal.recall("line-1", "torque", "equipment", "cell-4", { since: t0 - 2000 })).map((e) => e.event)).toEqual([events[2], events[1]])
      expect(yield* journal.recall("line-1", "torque", "tool", "nobody")).toEqual([])

      // Counts, bytes, latest, LRU stamps and the reverse set.
      const figures = yield* journal.figures("line-1")
      expect(figures).toMatchObject([{ journal: "torque", entries: 3 }])
      expect(figures[0]!.bytes).toBeGreaterThan(0)
      expect(yield* raw((c) => c.zrange(`${prefix}:journal:latest:line-1:torque:tool`, 0, -1, "WITHSCORES"))).toEqual(["nr-2", String(t0 - 2000), "nr-1", String(t0 - 1000)])
      expect(yield* raw((c) => c.zrange(`${prefix}:journal:lru:line-1:torque`, 0, -1))).toContain(`${prefix}:journal:index:line-1:torque:tool:nr-1`)
      expect((yield* raw((c) => c.smembers(`${prefix}:journal:entry:line-1:torque:${byTool[0]!.id}`))).sort()).toEqual([
        `${prefix}:journal:index:line-1:torque:equipment:cell-4`,
        `${prefix}:journal:index:line-1:torque:job:job-b`,
        `${prefix}:journal:index:line-1:torque:tool:nr-1`
      ])

      // Bad input: a clear error, nothing written.
      const before = yield* keyDump(prefix)
      expect(yield* Effect.flip(journal.recall("line-1", "torque", "colour", "x"))).toMatchObject({ _tag: "InvalidInput", field: "searchKey" })
      expect(yield* Effect.flip(journal.recall("line-1", "torque", "tool", "nr-1", { limit: 0 }))).toMatchObject({ _tag: "InvalidInput", field: "limit" })
      expect(yield* Effect.flip(journal.recall("line-1", "nope", "tool", "nr-1"))).toMatchObject({ _tag: "JournalNotFound" })
      expect(yield* Effect.flip(journal.insert("line-1", "torque", { ...torqueEvent(t0), time: "not a time" }))).toMatchObject({ _tag: "InvalidInput", field: "time" })
      expect(yield* Effect.flip(journal.insert("line-1", "torque", { ...torqueEvent(t0), id: "" }))).toMatchObject({ _tag: "InvalidInput", field: "event" })
      expect(yield* keyDump(prefix)).toEqual(before)
    }).pipe(Effect.provide(layer))
  )

  it.effect("a recall with stamp: false writes nothing, with the cache and without", () =>
    Effect.gen(function* () {
      for (const cacheBytes of [1024 * 1024, 0]) {
        const scope = `ro-${cacheBytes}`
        const written = yield* Effect.gen(function* () {
          const journal = yield* Journal
          yield* journal.configure(scope, torqueConfig)
          yield* journal.insert(scope, "torque", torqueEvent(clock.now - 1000, { tool: "nr-ro" }))
          const before = yield* keyDump(prefix)
          const entries = yield* journal.recall(scope, "torque", "tool", "nr-ro", { stamp: false })
          expect(entries).toHaveLength(1)
          expect(yield* keyDump(prefix)).toEqual(before)
          return entries
        }).pipe(Effect.provide(journalLayer(prefix, clockLayer, { cacheBytes })))
        expect(written[0]!.event).toMatchObject({ data: { tool_id: "nr-ro" } })
      }
    })
  )

  it.effect("record journals an event in every journal whose types name its type", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.configure("rec-1", torqueConfig)
      yield* journal.configure("rec-2", { ...torqueConfig, name: "all", types: [...torqueConfig.types, "com.example.station.qa.v1"] })
      yield* journal.configure("rec-2", { ...torqueConfig, name: "qa", types: ["com.example.station.qa.v1"], counters: [] })
      const torque = torqueEvent(clock.now, { tool: "nr-7" })
      const recorded = yield* journal.record(torque)
      expect(recorded.map((r) => [r.scope, r.journal, r.status])).toEqual([["rec-1", "torque", "inserted"], ["rec-2", "all", "inserted"]])
      expect((yield* journal.record(torque, { scope: "rec-1" })).map((r) => r.status)).toEqual(["duplicate"])
      const qa = { ...torqueEvent(clock.now, { tool: "nr-7" }), type: "com.example.station.qa.v1" }
      expect((yield* journal.record(qa, { scope: "rec-2" })).map((r) => r.journal)).toEqual(["all", "qa"])
      expect(yield* journal.record({ ...qa, type: "com.example.other.v1" })).toEqual([])
      expect((yield* journal.recall("rec-2", "all", "tool", "nr-7")).length).toBe(2)
    }).pipe(Effect.provide(layer))
  )

  it.effect("the same event twice changes nothing", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.configure("line-2", torqueConfig)
      const event = torqueEvent(clock.now - 500, { tool: "nr-9" })
      expect((yield* journal.insert("line-2", "torque", event)).status).toBe("inserted")
      const before = yield* keyDump(prefix)
      const again = yield* journal.insert("line-2", "torque", event)
      expect(again).toEqual({ status: "duplicate", id: dedupeHash(event.source, event.id), bytes: 0 })
      // Even with another payload: the event's identity is (source, id).
      expect((yield* journal.insert("line-2", "torque", { ...event, data: { tool_id: "nr-9", torque: 1 } })).status).toBe("duplicate")
      expect(yield* keyDump(prefix)).toEqual(before)
      expect(yield* journal.counter("line-2", "torque", "torque_1h", "nr-9")).toBe(1)
    }).pipe(Effect.provide(layer))
  )

  it.effect("a key of the wrong type anywhere makes the insert write nothing (WrongType)", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.configure("line-3", torqueConfig)
      const event = torqueEvent(clock.now - 100, { tool: "nr-4", job: "job-x" })
      const id = dedupeHash(event.source, event.id)
      const bucket = Math.floor((clock.now - 100) / 60_000) * 60_000
      const spoilt = [
        `${prefix}:journal:payload:line-3:torque`,
        `${prefix}:journal:entry:line-3:torque:${id}`,
        `${prefix}:journal:refdate:line-3:torque`,
        `${prefix}:journal:fields:line-3:torque`,
        `${prefix}:journal:count:line-3`,
        `${prefix}:journal:bytes:line-3`,
        `${prefix}:counter:expiry:line-3`,
        `${prefix}:journal:index:line-3:torque:job:job-x`,
        `${prefix}:journal:latest:line-3:torque:equipment`,
        `${prefix}:counter:line-3:torque:torque_7d`,
        `${prefix}:counter:bucket:line-3:torque:torque_sum_1h:nr-4`
      ]
      for (const key of spoilt) {
        yield* raw((c) => c.set(key, "spoilt"))
        const before = yield* keyDump(prefix)
        const error = yield* Effect.flip(journal.insert("line-3", "torque", event))
        expect(error).toMatchObject({ _tag: "WrongType", key, actual: "string" })
        expect(yield* keyDump(prefix)).toEqual(before)
        yield* raw((c) => c.del(key))
      }
      expect(bucket).toBeGreaterThan(0)
      expect((yield* journal.insert("line-3", "torque", event)).status).toBe("inserted")
    }).pipe(Effect.provide(layer))
  )
})
