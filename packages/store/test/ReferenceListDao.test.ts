import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { type ReferenceKind, referenceKinds } from "@microdcs/keyschema"
import { randomPrefix } from "@microdcs/test-utils"
import { ReferenceListDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const layerFor = (prefix: string) => ReferenceListDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))
const prefix = randomPrefix()
const layer = layerFor(prefix)

const awkward = ["eq:1", "a|b", "100%", "with space", "Prüfstand-Ω", "機械-7", "tab\there", "emoji-🏭"]

describe("ReferenceListDao", () => {
  it.effect("adds, checks, lists and removes ids with separators, spaces and non-ASCII", () =>
    Effect.gen(function* () {
      const refs = yield* ReferenceListDao
      expect(yield* refs.add("equipment", "area:1", awkward)).toBe(awkward.length)
      expect(yield* refs.add("equipment", "area:1", ["eq:1"])).toBe(0)
      expect(yield* refs.members("equipment", "area:1")).toEqual([...awkward].sort())
      for (const id of awkward) expect(yield* refs.isMember("equipment", "area:1", id)).toBe(true)
      // Encoding is injective: neighbouring scopes and kinds see nothing.
      expect(yield* refs.isMember("equipment", "area", "eq:1")).toBe(false)
      expect(yield* refs.isMember("personnel", "area:1", "eq:1")).toBe(false)
      expect(yield* refs.remove("equipment", "area:1", ["a|b", "not-there"])).toBe(1)
      expect(yield* refs.isMember("equipment", "area:1", "a|b")).toBe(false)
      expect(yield* refs.members("equipment", "area:1")).toHaveLength(awkward.length - 1)
    }).pipe(Effect.provide(layer))
  )

  it.effect("missing: the ids not in the list, in order, without repeats", () =>
    Effect.gen(function* () {
      const refs = yield* ReferenceListDao
      yield* refs.add("materialdefinition", "s-miss", ["m1", "m:2", "Ω"])
      expect(yield* refs.missing("materialdefinition", "s-miss", ["m1", "x", "Ω", "y", "x", "m:2"])).toEqual(["x", "y"])
      expect(yield* refs.missing("materialdefinition", "s-miss", [])).toEqual([])
      expect(yield* refs.missing("materialclass", "s-miss", ["m1"])).toEqual(["m1"])
    }).pipe(Effect.provide(layer))
  )

  it.effect("adding registers the scope (and announces a new one); removing keeps it", () =>
    Effect.gen(function* () {
      const refs = yield* ReferenceListDao
      const valkey = yield* Valkey
      const scopes = `${prefix}:scopes`
      yield* refs.add("personnel", "reg:scope", ["p1"])
      expect(yield* unsafeCommand(valkey, "sismember", (c) => c.sismember(scopes, "reg:scope"))).toBe(1)
      yield* refs.remove("personnel", "reg:scope", ["p1"])
      expect(yield* refs.members("personnel", "reg:scope")).toEqual([])
      expect(yield* unsafeCommand(valkey, "sismember", (c) => c.sismember(scopes, "reg:scope"))).toBe(1)
      // An empty add creates no list, so it registers nothing.
      expect(yield* refs.add("personnel", "empty-scope", [])).toBe(0)
      expect(yield* unsafeCommand(valkey, "sismember", (c) => c.sismember(scopes, "empty-scope"))).toBe(0)
    }).pipe(Effect.provide(layer))
  )

  it.effect("works for all five kinds", () =>
    Effect.gen(function* () {
      const refs = yield* ReferenceListDao
      for (const kind of referenceKinds) yield* refs.add(kind, "kinds", [`${kind}-1`])
      for (const kind of referenceKinds) expect(yield* refs.members(kind, "kinds")).toEqual([`${kind}-1`])
    }).pipe(Effect.provide(layer))
  )

  it.effect("adds thousands of ids in one call", () =>
    Effect.gen(function* () {
      const refs = yield* ReferenceListDao
      const ids = Array.from({ length: 12_000 }, (_, i) => `bulk-${i}`)
      expect(yield* refs.add("physicalasset", "bulk", ids)).toBe(12_000)
      expect(yield* refs.missing("physicalasset", "bulk", ["bulk-0", "bulk-11999", "bulk-12000"])).toEqual(["bulk-12000"])
    }).pipe(Effect.provide(layer))
  )

  it.effect("a list key of another type is WrongType and nothing is written", () =>
    Effect.gen(function* () {
      const refs = yield* ReferenceListDao
      const valkey = yield* Valkey
      const key = `${prefix}:ref:equipment:corrupt`
      yield* unsafeCommand(valkey, "corrupt", (c) => c.set(key, "x"))
      expect(yield* Effect.flip(refs.add("equipment", "corrupt", ["a"]))).toMatchObject({ _tag: "WrongType", key, expected: "set", actual: "string" })
      expect(yield* unsafeCommand(valkey, "sismember", (c) => c.sismember(`${prefix}:scopes`, "corrupt"))).toBe(0)
      for (const attempt of <ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>>>[refs.remove("equipment", "corrupt", ["a"]), refs.isMember("equipment", "corrupt", "a"), refs.members("equipment", "corrupt"), refs.missing("equipment", "corrupt", ["a"])]) {
        expect(yield* Effect.flip(attempt)).toMatchObject({ _tag: "WrongType", key, actual: "string" })
      }
    }).pipe(Effect.provide(layer))
  )

  it.effect("bad input is InvalidInput and writes nothing", () => {
    const cleanPrefix = randomPrefix("bad")
    return Effect.gen(function* () {
      const refs = yield* ReferenceListDao
      const valkey = yield* Valkey
      const cases = [
        [refs.add("equipment", "", ["a"]), "scope"],
        [refs.add("equipment", "s".repeat(513), ["a"]), "scope"],
        [refs.add("equipment", "s\uD800", ["a"]), "scope"],
        [refs.add("tools" as ReferenceKind, "s", ["a"]), "kind"],
        [refs.add("equipment", "s", ["ok", ""]), "ids[1]"],
        [refs.add("equipment", "s", ["ok", "x".repeat(513)]), "ids[1]"],
        [refs.add("equipment", "s", ["\uDC00"]), "ids[0]"],
        [refs.remove("equipment", "s", [""]), "ids[0]"],
        [refs.isMember("equipment", "s", ""), "id"],
        [refs.missing("equipment", "s", ["a", "\uD800"]), "ids[1]"]
      ] as const
      for (const [attempt, field] of cases) {
        expect(yield* Effect.flip(attempt as Effect.Effect<unknown, { _tag: string }>)).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect(yield* unsafeCommand(valkey, "keys", (c) => c.keys(`${cleanPrefix}:*`))).toEqual([])
    }).pipe(Effect.provide(layerFor(cleanPrefix)))
  })
})
