import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { PublisherCursors, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const layerFor = (prefix: string) => PublisherCursors.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

describe("PublisherCursors", () => {
  it.effect("stores one cursor per scope and reads them back, one or all", () =>
    Effect.gen(function* () {
      const cursors = yield* PublisherCursors
      expect(yield* cursors.get("area:1")).toEqual(Option.none())
      expect(yield* cursors.getAll).toEqual(new Map())
      yield* cursors.set("area:1", "1700000000000-0")
      yield* cursors.set("__proto__", "1700000000001-3")
      yield* cursors.set("Ω|x", "5-0")
      yield* cursors.set("area:1", "1700000000002-1")
      expect(yield* cursors.get("area:1")).toEqual(Option.some("1700000000002-1"))
      expect(yield* cursors.getAll).toEqual(
        new Map([
          ["area:1", "1700000000002-1"],
          ["__proto__", "1700000000001-3"],
          ["Ω|x", "5-0"]
        ])
      )
    }).pipe(Effect.provide(layerFor(randomPrefix())))
  )

  it.effect("counts the publish sequence per scope from 1", () =>
    Effect.gen(function* () {
      const cursors = yield* PublisherCursors
      expect(yield* cursors.nextSequence("a")).toBe(1)
      expect(yield* cursors.nextSequence("a")).toBe(2)
      expect(yield* cursors.nextSequence("a:b")).toBe(1)
      const concurrent = yield* Effect.all(Array.from({ length: 10 }, () => cursors.nextSequence("a")), { concurrency: "unbounded" })
      expect([...concurrent].sort((x, y) => x - y)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    }).pipe(Effect.provide(layerFor(randomPrefix())))
  )

  it.effect("keys of another type are WrongType", () =>
    Effect.gen(function* () {
      const cursors = yield* PublisherCursors
      const valkey = yield* Valkey
      const hash = valkey.keys.key("publisherCursors", {}) as string
      const seq = valkey.keys.key("publishSequence", { scope: "s" }) as string
      yield* unsafeCommand(valkey, "corrupt", (c) => c.set(hash, "x"))
      yield* unsafeCommand(valkey, "corrupt", (c) => c.sadd(seq, "x"))
      expect(yield* Effect.flip(cursors.get("s"))).toMatchObject({ _tag: "WrongType", key: hash, expected: "hash", actual: "string" })
      expect(yield* Effect.flip(cursors.getAll)).toMatchObject({ _tag: "WrongType", key: hash })
      expect(yield* Effect.flip(cursors.set("s", "1-0"))).toMatchObject({ _tag: "WrongType", key: hash })
      expect(yield* Effect.flip(cursors.nextSequence("s"))).toMatchObject({ _tag: "WrongType", key: seq, actual: "set" })
    }).pipe(Effect.provide(layerFor(randomPrefix())))
  )

  it.effect("bad input is InvalidInput and writes nothing", () => {
    const cleanPrefix = randomPrefix("bad")
    return Effect.gen(function* () {
      const cursors = yield* PublisherCursors
      const valkey = yield* Valkey
      const cases = [
        [cursors.set("", "1-0"), "scope"],
        [cursors.set("s".repeat(513), "1-0"), "scope"],
        [cursors.set("s\uD800", "1-0"), "scope"],
        [cursors.set("s", ""), "streamId"],
        [cursors.set("s", "1"), "streamId"],
        [cursors.set("s", "1-0 "), "streamId"],
        [cursors.get(""), "scope"],
        [cursors.nextSequence(""), "scope"],
        [cursors.nextSequence("\uDC00"), "scope"]
      ] as const
      for (const [attempt, field] of cases) {
        expect(yield* Effect.flip(attempt as Effect.Effect<unknown, { _tag: string }>)).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect(yield* unsafeCommand(valkey, "keys", (c) => c.keys(`${cleanPrefix}:*`))).toEqual([])
    }).pipe(Effect.provide(layerFor(cleanPrefix)))
  })
})
