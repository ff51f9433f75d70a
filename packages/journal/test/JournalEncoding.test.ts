import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { decodeEntry, encodeEntry, FieldTable, Journal } from "@microdcs/journal"
import { journalLayer, movableClock, randomPrefix, raw, torqueConfig, torqueEvent } from "./JournalKit.js"

// Issue 12, item 4: MessagePack with the journal's field-index table, an envelope with a format
// version, optional LZ4; indexes assigned inside the insert script, never twice.

const prefix = randomPrefix("encoding")
const { clock, layer: clockLayer } = movableClock()

describe("journal entry encoding", () => {
  it("round-trips nested events with known and unknown field names, with and without LZ4", () => {
    const table = new FieldTable()
    const event = torqueEvent(clock.now, { tool: "nr-1" })
    const first = encodeEntry(event, table, "lz4")
    expect(first.bytes[0]).toBe(1) // format version
    expect(first.bytes[1]).toBe(1) // LZ4
    expect(first.newFields).toEqual(expect.arrayContaining(["id", "data", "tool_id", "limits", "torqueMax"]))
    expect(decodeEntry(first.bytes, table)).toEqual(event)
    first.newFields.forEach((name, i) => table.learn(name, i + 1))
    const indexed = encodeEntry(event, table, "none")
    expect(indexed.newFields).toEqual([])
    expect(indexed.bytes[1]).toBe(0)
    expect(indexed.bytes.length).toBeLessThan(Buffer.byteLength(JSON.stringify(event)))
    expect(decodeEntry(indexed.bytes, table)).toEqual(event)
    // A field called __proto__ stays a field.
    const odd = JSON.parse('{"__proto__":{"x":1},"a":[{"b":null}]}') as unknown
    expect(decodeEntry(encodeEntry(odd, table, "none").bytes, table)).toEqual(odd)
    // An index the table does not know, or another format version, is an error, not a wrong value.
    expect(() => decodeEntry(indexed.bytes, new FieldTable())).toThrow(/field index/)
    expect(() => decodeEntry(Buffer.from([9, 0, 0x80]), table)).toThrow(/format version 9/)
  })

  it.effect("two writers assigning field indexes concurrently never collide, and each reads the other's entries", () =>
    Effect.gen(function* () {
      const writer = (name: string) =>
        Effect.gen(function* () {
          const journal = yield* Journal
          yield* journal.reload()
          const inserted: Array<string> = []
          for (let i = 0; i < 30; i++) {
            const event = { ...torqueEvent(clock.now - i), data: { tool_id: "nr-1", [`${name}_${i}`]: i, [`shared_${i % 7}`]: name, nested: { [`deep_${i % 5}`]: [i] } } }
            yield* journal.insert("enc", "torque", event)
            inserted.push(event.id)
          }
          return inserted
        }).pipe(Effect.provide(journalLayer(prefix, clockLayer, { cacheBytes: 0 })))

      yield* Effect.gen(function* () {
        yield* (yield* Journal).configure("enc", { ...torqueConfig, counters: [] })
      }).pipe(Effect.provide(journalLayer(prefix, clockLayer)))
      const [a, b] = yield* Effect.all([writer("a"), writer("b")], { concurrency: 2 })

      const fields = yield* raw((c) => c.hgetall(`${prefix}:journal:fields:enc:torque`)).pipe(Effect.provide(journalLayer(prefix, clockLayer)))
      const indexes = Object.values(fields).map(Number).sort((x, y) => x - y)
      expect(indexes).toEqual(Array.from({ length: indexes.length }, (_, i) => i + 1))
      expect(Object.keys(fields)).toEqual(expect.arrayContaining(["a_0", "b_29", "shared_6", "deep_4", "tool_id"]))

      // A third process with an empty table decodes every entry of both writers.
      const recalled = yield* Effect.gen(function* () {
        const journal = yield* Journal
        yield* journal.reload()
        return yield* journal.recall("enc", "torque", "tool", "nr-1", { limit: 100 })
      }).pipe(Effect.provide(journalLayer(prefix, clockLayer)))
      expect(recalled.map((e) => (e.event as { id: string }).id).sort()).toEqual([...a, ...b].sort())
      const one = recalled.find((e) => (e.event as { id: string }).id === a[3])!.event as { data: Record<string, unknown> }
      expect(one.data).toEqual({ tool_id: "nr-1", a_3: 3, shared_3: "a", nested: { deep_3: [3] } })
    })
  )
})
