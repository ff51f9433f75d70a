import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Journal } from "@microdcs/journal"
import { journalLayer, movableClock, randomPrefix, raw, torqueConfig, torqueEvent } from "./JournalKit.js"

// Issue 12, item 5: the local cache is bounded by bytes and warmed at start from the most
// recently used journals until it is full (no scan of the payloads).

const prefix = randomPrefix("jcache")
const { clock, layer: clockLayer } = movableClock()
const MAX = 6_000

describe("journal cache", () => {
  it.effect("never exceeds its byte bound; warming loads the most recently recalled values first and stops when full", () =>
    Effect.gen(function* () {
      // First process: writes 20 tools × 5 readings and recalls every tool, tool-19 last.
      yield* Effect.gen(function* () {
        const journal = yield* Journal
        yield* journal.configure("w1", { ...torqueConfig, counters: [] })
        for (let tool = 0; tool < 20; tool++) {
          for (let i = 0; i < 5; i++) yield* journal.insert("w1", "torque", torqueEvent(clock.now - i * 1000, { tool: `tool-${tool}` }))
        }
        for (let tool = 0; tool < 20; tool++) {
          clock.now += 1000
          expect(yield* journal.recall("w1", "torque", "tool", `tool-${tool}`)).toHaveLength(5)
          expect(journal.cache.bytes).toBeLessThanOrEqual(MAX)
        }
        expect(journal.cache.entries).toBeGreaterThan(0)
        expect(journal.cache.entries).toBeLessThan(100) // the bound evicted the oldest
        // A recall of a value without entries is stamped too (one pipelined round trip); warming drops it.
        clock.now += 1000
        expect(yield* journal.recall("w1", "torque", "tool", "nobody")).toEqual([])
      }).pipe(Effect.provide(journalLayer(prefix, clockLayer, { cacheBytes: MAX })))

      // A new process warms from the LRU: newest recalls first, until the next entry does not fit.
      yield* Effect.gen(function* () {
        const journal = yield* Journal
        yield* journal.reload()
        const warmed = yield* journal.warm
        expect(warmed.full).toBe(true)
        expect(warmed.bytes).toBeLessThanOrEqual(MAX)
        expect(journal.cache.bytes).toBe(warmed.bytes)
        expect(warmed.indexKeys).toBeLessThan(20)
        expect(warmed.entries).toBeGreaterThan(5)
        expect(yield* raw((c) => c.zrange(`${prefix}:journal:lru:w1:torque`, 0, -1))).not.toContain(`${prefix}:journal:index:w1:torque:tool:nobody`)

        // What was warmed is served from the cache: with the payloads gone, the newest tool still
        // recalls in full, the oldest (not warmed) finds nothing to return.
        yield* raw((c) => c.del(`${prefix}:journal:payload:w1:torque`))
        expect(yield* journal.recall("w1", "torque", "tool", "tool-19")).toHaveLength(5)
        expect(yield* journal.recall("w1", "torque", "tool", "tool-0")).toHaveLength(0)
      }).pipe(Effect.provide(journalLayer(prefix, clockLayer, { cacheBytes: MAX })))

      // Without a cache, a recall brings the payloads in the same script.
      yield* Effect.gen(function* () {
        const journal = yield* Journal
        yield* journal.configure("w2", { ...torqueConfig, counters: [] })
        yield* journal.insert("w2", "torque", torqueEvent(clock.now, { tool: "t" }))
        expect(yield* journal.recall("w2", "torque", "tool", "t")).toHaveLength(1)
        expect(journal.cache.entries).toBe(0)
        expect((yield* journal.warm).entries).toBe(0)
      }).pipe(Effect.provide(journalLayer(prefix, clockLayer, { cacheBytes: 0 })))
    })
  )
})
