import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { ChangeStream, JobOrderDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const layerFor = (prefix: string) =>
  Layer.mergeAll(ChangeStream.Default, JobOrderDao.Default).pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))
const prefix = randomPrefix()
const layer = layerFor(prefix)

const putOrders = (scope: string, ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const orders = yield* JobOrderDao
    const ops: Array<string> = []
    for (const id of ids) ops.push((yield* orders.put({ id, scope, doc: "{}", priority: 1, expectedVersion: 0, change: "Store" })).op)
    return ops
  })

describe("ChangeStream", () => {
  it.effect("reads decoded entries from the start and pages with an exclusive cursor", () =>
    Effect.gen(function* () {
      const changes = yield* ChangeStream
      const ids = ["o1", "o2", "o:3", "o4", "o5"]
      const ops = yield* putOrders("area:1", ids)
      const first = yield* changes.read("area:1", { count: 2 })
      expect(first.entries).toHaveLength(2)
      expect(first.entries[0]).toMatchObject({ kind: "joborder", id: "o1", change: "Store", version: 1, op: ops[0] })
      expect(first.entries[0]!.ts).toBeGreaterThan(1_600_000_000_000)
      expect(first.entries[0]!.streamId).toMatch(/^\d+-\d+$/)
      expect(first.next).toBe(first.entries[1]!.streamId)

      const seen = [...first.entries]
      let cursor = first.next
      for (;;) {
        const page = yield* changes.read("area:1", { after: cursor, count: 2 })
        if (page.entries.length === 0) {
          expect(page.next).toBe(cursor)
          break
        }
        seen.push(...page.entries)
        cursor = page.next
      }
      expect(seen.map((e) => e.id)).toEqual(ids)
      expect(seen.map((e) => e.op)).toEqual(ops)
      expect(new Set(seen.map((e) => e.streamId)).size).toBe(ids.length)
      expect(yield* changes.latestId("area:1")).toEqual(Option.some(seen[seen.length - 1]!.streamId))
    }).pipe(Effect.provide(layer))
  )

  it.effect("an absent stream reads empty and has no latest id", () =>
    Effect.gen(function* () {
      const changes = yield* ChangeStream
      expect(yield* changes.read("nothing-here")).toEqual({ entries: [], next: "0" })
      expect(yield* changes.read("nothing-here", { after: "5-0" })).toEqual({ entries: [], next: "5-0" })
      expect(yield* changes.latestId("nothing-here")).toEqual(Option.none())
    }).pipe(Effect.provide(layer))
  )

  it.effect("skips an undecodable entry but moves the cursor past it", () =>
    Effect.gen(function* () {
      const changes = yield* ChangeStream
      const valkey = yield* Valkey
      const key = `${prefix}:changes:mixed`
      // Missing v and a non-numeric ts: Number() would make both 0; the decoder must refuse them.
      yield* unsafeCommand(valkey, "xadd", (c) => c.xadd(key, "*", "kind", "joborder", "id", "bad", "change", "put", "op", "x", "ts", "soon"))
      const badId = yield* unsafeCommand(valkey, "xadd", (c) => c.xadd(key, "*", "kind", "joborder", "id", "bad2", "change", "put", "v", "", "op", "x", "ts", "1"))
      yield* putOrders("mixed", ["good"])
      const onlyBad = yield* changes.read("mixed", { count: 2 })
      expect(onlyBad).toEqual({ entries: [], next: badId })
      const rest = yield* changes.read("mixed", { after: onlyBad.next })
      expect(rest.entries.map((e) => e.id)).toEqual(["good"])
    }).pipe(Effect.provide(layer))
  )

  it.effect("a changes key of another type is WrongType", () =>
    Effect.gen(function* () {
      const changes = yield* ChangeStream
      const valkey = yield* Valkey
      const key = `${prefix}:changes:corrupt`
      yield* unsafeCommand(valkey, "corrupt", (c) => c.set(key, "x"))
      expect(yield* Effect.flip(changes.read("corrupt"))).toMatchObject({ _tag: "WrongType", key, expected: "stream", actual: "string" })
      expect(yield* Effect.flip(changes.latestId("corrupt"))).toMatchObject({ _tag: "WrongType", key })
    }).pipe(Effect.provide(layer))
  )

  it.effect("bad input is InvalidInput and reads nothing", () => {
    const cleanPrefix = randomPrefix("bad")
    return Effect.gen(function* () {
      const changes = yield* ChangeStream
      const valkey = yield* Valkey
      const cases = [
        [changes.read(""), "scope"],
        [changes.read("s".repeat(513)), "scope"],
        [changes.read("s\uD800"), "scope"],
        [changes.read("s", { after: "-" }), "after"],
        [changes.read("s", { after: "(1-0" }), "after"],
        [changes.read("s", { after: "12" }), "after"],
        [changes.read("s", { after: "18446744073709551616-0" }), "after"],
        [changes.read("s", { count: 0 }), "count"],
        [changes.read("s", { count: 1.5 }), "count"],
        [changes.read("s", { count: 10_001 }), "count"],
        [changes.latestId(""), "scope"]
      ] as const
      for (const [attempt, field] of cases) {
        expect(yield* Effect.flip(attempt as Effect.Effect<unknown, { _tag: string }>)).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect(yield* unsafeCommand(valkey, "keys", (c) => c.keys(`${cleanPrefix}:*`))).toEqual([])
    }).pipe(Effect.provide(layerFor(cleanPrefix)))
  })
})
