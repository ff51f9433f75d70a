import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { IndexMaintenance, IndexRegistry } from "@microdcs/store"
import { Journal, journalIndexedFamily } from "@microdcs/journal"
import { journalLayer, movableClock, randomPrefix, raw, torqueConfig, torqueEvent } from "./JournalKit.js"

// Issue 12, items 3 and 5: counters over their windows with minute, hour and day buckets, count
// and sum, exact before the sweep; the sweep of entries and buckets; the check and rebuild.

const prefix = randomPrefix("counters")
const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR
const t0 = Date.UTC(2026, 0, 5, 10, 0, 0)
const { clock, layer: clockLayer } = movableClock(t0)
const layer = Layer.mergeAll(
  journalLayer(prefix, clockLayer),
  IndexMaintenance.Default.pipe(Layer.provide(IndexRegistry.with(journalIndexedFamily)))
).pipe(Layer.provideMerge(journalLayer(prefix, clockLayer)))

/** A stand-in for the recipe condition language: `result == NOK` on the event's data. */
const nokLanguage = {
  compile: (text: string) => {
    const match = /^(\w+) == (\w+)$/.exec(text)
    if (!match) return { problem: `cannot read '${text}'` }
    const [, field, value] = match
    return { predicate: (event: unknown) => (event as { data?: Record<string, unknown> }).data?.[field!] === value }
  }
}

/** Every counter total equals the sum of its stored buckets, and only live buckets are stored. */
const totalsAndBuckets = (scope: string) =>
  raw(async (c) => {
    const out: Record<string, { total: number; buckets: number }> = {}
    for (const counter of ["torque_1h", "torque_sum_1h", "torque_1d"]) {
      const totals = await c.hgetall(`${prefix}:counter:${scope}:torque:${counter}`)
      for (const value of ["nr-1", "nr-2"]) {
        const buckets = await c.hvals(`${prefix}:counter:bucket:${scope}:torque:${counter}:${value}`)
        out[`${counter}/${value}`] = { total: Number(totals[value] ?? 0), buckets: buckets.reduce((a, b) => a + Number(b), 0) }
      }
    }
    return out
  })

describe("journal counters", () => {
  it.effect("count and sum over minute, hour and day buckets, exact as the clock moves, before and after the sweep", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.configure("c1", torqueConfig)
      clock.now = t0 + 55 * MIN
      yield* journal.insert("c1", "torque", torqueEvent(t0 + 10_000, { tool: "nr-1", torque: 20 }))
      yield* journal.insert("c1", "torque", torqueEvent(t0 + 30 * MIN, { tool: "nr-1", torque: 25 }))
      yield* journal.insert("c1", "torque", torqueEvent(t0 + 50 * MIN, { tool: "nr-1", torque: 22.5 }))
      yield* journal.insert("c1", "torque", torqueEvent(t0 + 51 * MIN, { tool: "nr-2", torque: 30, equipment: "cell-5" }))
      const read = (counter: string, value = "nr-1") => journal.counter("c1", "torque", counter, value)

      expect(yield* read("torque_1h")).toBe(3)
      expect(yield* read("torque_sum_1h")).toBe(67.5)
      expect(yield* read("torque_1d")).toBe(3)
      expect(yield* read("torque_7d", "cell-4")).toBe(3)
      expect(yield* journal.counterValues("c1", ["torque_1h", "torque_sum_1h", "torque_7d"], { tool: "nr-2", equipment: "cell-5" })).toEqual({
        torque_1h: 1, torque_sum_1h: 30, torque_7d: 1
      })
      // A counter whose search key has no value is left out; an unknown one is an error.
      expect(yield* journal.counterValues("c1", ["torque_1h", "torque_7d"], { tool: "nr-1" })).toEqual({ torque_1h: 3 })
      expect(yield* Effect.flip(journal.counterValues("c1", ["nope"], {}))).toMatchObject({ _tag: "JournalNotFound", counter: "nope" })

      // The 10:00 minute bucket leaves the 1h window at 11:01, the 10:30 one at 11:31: exact before any sweep.
      clock.now = t0 + HOUR + MIN - 1
      expect(yield* read("torque_1h")).toBe(3)
      clock.now = t0 + HOUR + MIN
      expect(yield* read("torque_1h")).toBe(2)
      expect(yield* read("torque_sum_1h")).toBe(47.5)
      clock.now = t0 + HOUR + 31 * MIN
      expect(yield* read("torque_1h")).toBe(1)
      expect(yield* read("torque_sum_1h")).toBe(22.5)
      // The hour bucket 10:00 of the 1-day counter stays until 11:00 the next day.
      expect(yield* read("torque_1d")).toBe(3)

      const swept = yield* journal.sweep()
      expect(swept.bucketsSubtracted).toBe(4) // 2 × 1h count, 2 × 1h sum
      expect(yield* read("torque_1h")).toBe(1)
      expect(yield* read("torque_sum_1h")).toBe(22.5)
      for (const { total, buckets } of Object.values(yield* totalsAndBuckets("c1"))) expect(total).toBeCloseTo(buckets, 9)

      clock.now = t0 + DAY + HOUR - 1
      expect(yield* read("torque_1d")).toBe(3)
      clock.now = t0 + DAY + HOUR
      expect(yield* read("torque_1d")).toBe(0)
      expect(yield* read("torque_1h")).toBe(0)
      // The day bucket of Jan 5 leaves the 7-day window on Jan 13 00:00.
      expect(yield* read("torque_7d", "cell-4")).toBe(3)
      clock.now = Date.UTC(2026, 0, 13) - 1
      expect(yield* read("torque_7d", "cell-4")).toBe(3)
      clock.now = Date.UTC(2026, 0, 13)
      expect(yield* read("torque_7d", "cell-4")).toBe(0)

      // Everything swept: no bucket, total or expiry member is left.
      yield* journal.sweep()
      expect(yield* raw((c) => c.exists(`${prefix}:counter:expiry:c1`))).toBe(0)
      expect(yield* raw((c) => c.exists(`${prefix}:counter:c1:torque:torque_1h`, `${prefix}:counter:c1:torque:torque_7d`))).toBe(0)
    }).pipe(Effect.provide(layer))
  )

  it.effect("a late event out of its window does not count, and expiry removes entries with every index entry", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.configure("c2", torqueConfig)
      clock.now = t0
      yield* journal.insert("c2", "torque", torqueEvent(t0 - 2 * HOUR, { tool: "nr-1" }))
      expect(yield* journal.counter("c2", "torque", "torque_1h", "nr-1")).toBe(0)
      expect(yield* journal.counter("c2", "torque", "torque_1d", "nr-1")).toBe(1)
      yield* journal.insert("c2", "torque", torqueEvent(t0 - HOUR, { tool: "nr-1", job: "job-old" }))
      yield* journal.insert("c2", "torque", torqueEvent(t0, { tool: "nr-1", job: "job-new" }))
      yield* journal.recall("c2", "torque", "job", "job-old") // stamps its index in the LRU

      // Retention 1d by the event time: at t0 + 1d - 1h the two older entries are past it.
      clock.now = t0 + DAY - HOUR
      const swept = yield* journal.sweep({ scope: "c2", batch: 1 })
      expect(swept.entriesRemoved).toBe(2)
      // The value has no entry left: it left the LRU (nothing to warm).
      expect(yield* raw((c) => c.zrange(`${prefix}:journal:lru:c2:torque`, 0, -1))).not.toContain(`${prefix}:journal:index:c2:torque:job:job-old`)
      const left = yield* journal.recall("c2", "torque", "tool", "nr-1")
      expect(left.map((e) => e.time)).toEqual([t0])
      expect(yield* journal.recall("c2", "torque", "job", "job-old")).toEqual([])
      expect(yield* raw((c) => c.exists(`${prefix}:journal:index:c2:torque:job:job-old`))).toBe(0)
      expect(yield* raw((c) => c.zrange(`${prefix}:journal:latest:c2:torque:job`, 0, -1))).toEqual(["job-new"])
      expect(yield* raw((c) => c.zcard(`${prefix}:journal:refdate:c2:torque`))).toBe(1)
      expect(yield* raw((c) => c.hlen(`${prefix}:journal:payload:c2:torque`))).toBe(1)
      const figures = yield* journal.figures("c2")
      expect(figures.map((f) => [f.journal, f.entries])).toEqual([["torque", 1]])
      expect(figures[0]!.bytes).toBe(yield* raw((c) => c.hstrlen(`${prefix}:journal:payload:c2:torque`, left[0]!.id)))
      for (const { total, buckets } of Object.values(yield* totalsAndBuckets("c2"))) expect(total).toBeCloseTo(buckets, 9)

      clock.now = t0 + DAY
      yield* journal.sweep({ scope: "c2" })
      expect(yield* raw((c) => c.keys(`${prefix}:journal:*:c2:torque*`))).toEqual(
        expect.arrayContaining([`${prefix}:journal:fields:c2:torque`])
      )
      expect(yield* raw((c) => c.exists(`${prefix}:journal:payload:c2:torque`, `${prefix}:journal:refdate:c2:torque`, `${prefix}:journal:count:c2`))).toBe(0)
    }).pipe(Effect.provide(layer))
  )

  it.effect("a counter with a condition counts only the entries it holds for", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.configure("c5", { ...torqueConfig, counters: [{ name: "nok_1h", searchKey: "tool", window: "1h", when: "result == NOK" }] })
      clock.now = t0
      for (const ok of [true, false, true, false, false]) yield* journal.insert("c5", "torque", torqueEvent(t0, { tool: "nr-1", ok }))
      expect(yield* journal.counter("c5", "torque", "nok_1h", "nr-1")).toBe(3)
      expect(yield* Effect.flip(journal.configure("c5", { ...torqueConfig, name: "other", counters: [{ name: "x", searchKey: "tool", window: "1h", when: "garbage" }] }))).toMatchObject({
        _tag: "JournalConfigInvalid",
        problems: ["counters[0].when: cannot read 'garbage'"]
      })
    }).pipe(Effect.provide(journalLayer(prefix, clockLayer, { conditions: nokLanguage })))
  )

  it.effect("two sweepers at once subtract every bucket exactly once", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      yield* journal.configure("c3", torqueConfig)
      clock.now = t0
      for (let i = 0; i < 40; i++) yield* journal.insert("c3", "torque", torqueEvent(t0 - i * MIN, { tool: i % 2 ? "nr-1" : "nr-2", torque: i }))
      clock.now = t0 + 2 * DAY
      const [a, b] = yield* Effect.all([journal.sweep({ scope: "c3", batch: 7 }), journal.sweep({ scope: "c3", batch: 5 })], { concurrency: 2 })
      expect(a.entriesRemoved + b.entriesRemoved).toBe(40)
      expect(a.bucketsSubtracted + b.bucketsSubtracted).toBe(40 * 2 + 3 /* hour buckets of the 1d counter: nr-2 at 09:00 and 10:00, nr-1 at 09:00 */)
      expect(yield* raw((c) => c.exists(`${prefix}:counter:c3:torque:torque_1h`, `${prefix}:counter:c3:torque:torque_1d`))).toBe(0)
      // Only the 7-day counter's day bucket is still in its window.
      expect(yield* raw((c) => c.zrange(`${prefix}:counter:expiry:c3`, 0, -1))).toEqual([`torque|torque_7d|cell-4|${Date.UTC(2026, 0, 5)}`])
      expect(yield* journal.counter("c3", "torque", "torque_7d", "cell-4")).toBe(40)
    }).pipe(Effect.provide(layer))
  )

  it.effect("the check proves totals equal the sum of their buckets on a seeded island, and rebuild repairs it", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      const maintenance = yield* IndexMaintenance
      yield* journal.configure("c4", torqueConfig)
      clock.now = t0
      for (let i = 0; i < 12; i++) yield* journal.insert("c4", "torque", torqueEvent(t0 - i * 5 * MIN, { tool: i % 3 ? "nr-1" : "nr-2", torque: 20 + i / 4 }))
      clock.now = t0 + 30 * MIN
      yield* journal.sweep({ scope: "c4" })
      expect(yield* maintenance.check({ scope: "c4" })).toEqual([])

      // Corrupt: a total off by 5, a total with no bucket behind it, a count that lies.
      yield* raw((c) => c.hincrbyfloat(`${prefix}:counter:c4:torque:torque_sum_1h`, "nr-1", 5))
      yield* raw((c) => c.hset(`${prefix}:counter:c4:torque:torque_1h`, "ghost", 3))
      yield* raw((c) => c.hset(`${prefix}:journal:count:c4`, "torque", 99))
      yield* raw((c) => c.zadd(`${prefix}:journal:index:c4:torque:tool:nr-1`, t0, "no-such-entry"))
      const problems = yield* maintenance.check({ scope: "c4" })
      expect(problems.map((p) => [p.kind, p.key, p.member])).toEqual(expect.arrayContaining([
        ["wrong-score", `${prefix}:counter:c4:torque:torque_sum_1h`, "nr-1"],
        ["wrong-score", `${prefix}:counter:c4:torque:torque_1h`, "ghost"],
        ["wrong-score", `${prefix}:journal:count:c4`, "torque"],
        ["index-entry-without-document", `${prefix}:journal:index:c4:torque:tool:nr-1`, "no-such-entry"]
      ]))
      expect(problems).toHaveLength(4)
      expect(problems.find((p) => p.member === "torque")).toMatchObject({ expected: 12, found: 99 })

      const summary = yield* maintenance.rebuild({ scope: "c4" })
      expect(summary.repaired).toBeGreaterThanOrEqual(3)
      expect(summary.removed).toBe(1)
      expect(yield* maintenance.check({ scope: "c4" })).toEqual([])
      expect(maintenance.phases).toContain("journal")
    }).pipe(Effect.provide(layer))
  )
})
