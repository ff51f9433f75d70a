import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobAcceptanceDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const layerFor = (prefix: string) => JobAcceptanceDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))
const prefix = randomPrefix()
const layer = layerFor(prefix)

describe("JobAcceptanceDao", () => {
  it.effect("sets, reads and clears a scope's limit", () =>
    Effect.gen(function* () {
      const acceptance = yield* JobAcceptanceDao
      expect(yield* acceptance.get("line:1")).toEqual(Option.none())
      yield* acceptance.set("line:1", 25)
      expect(yield* acceptance.get("line:1")).toEqual(Option.some(25))
      yield* acceptance.set("line:1", 0)
      expect(yield* acceptance.get("line:1")).toEqual(Option.some(0))
      expect(yield* acceptance.get("line")).toEqual(Option.none())
      expect(yield* acceptance.clear("line:1")).toBe(true)
      expect(yield* acceptance.get("line:1")).toEqual(Option.none())
      expect(yield* acceptance.clear("line:1")).toBe(false)
    }).pipe(Effect.provide(layer))
  )

  it.effect("a stored value of another type is WrongType", () =>
    Effect.gen(function* () {
      const acceptance = yield* JobAcceptanceDao
      const valkey = yield* Valkey
      const key = `${prefix}:jobacceptance:corrupt`
      yield* unsafeCommand(valkey, "corrupt", (c) => c.rpush(key, "1"))
      expect(yield* Effect.flip(acceptance.get("corrupt"))).toMatchObject({ _tag: "WrongType", key, actual: "list" })
    }).pipe(Effect.provide(layer))
  )

  it.effect("a bad limit or scope is InvalidInput and writes nothing", () => {
    const cleanPrefix = randomPrefix("bad")
    return Effect.gen(function* () {
      const acceptance = yield* JobAcceptanceDao
      const valkey = yield* Valkey
      yield* acceptance.set("kept", 3)
      for (const limit of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60]) {
        expect(yield* Effect.flip(acceptance.set("kept", limit))).toMatchObject({ _tag: "InvalidInput", field: "limit" })
        expect(yield* Effect.flip(acceptance.set("other", limit))).toMatchObject({ _tag: "InvalidInput", field: "limit" })
      }
      expect(yield* acceptance.get("kept")).toEqual(Option.some(3))
      for (const scope of ["", "s".repeat(513), "s\uD800"]) {
        expect(yield* Effect.flip(acceptance.set(scope, 1))).toMatchObject({ _tag: "InvalidInput", field: "scope" })
        expect(yield* Effect.flip(acceptance.get(scope))).toMatchObject({ _tag: "InvalidInput", field: "scope" })
        expect(yield* Effect.flip(acceptance.clear(scope))).toMatchObject({ _tag: "InvalidInput", field: "scope" })
      }
      expect(yield* unsafeCommand(valkey, "keys", (c) => c.keys(`${cleanPrefix}:*`))).toEqual([`${cleanPrefix}:jobacceptance:kept`])
    }).pipe(Effect.provide(layerFor(cleanPrefix)))
  })
})
