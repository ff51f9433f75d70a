import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { KeyReads, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

// Issue 21, item 18: what the journal's index check and the test kit's snapshot read through the
// raw client before, as typed reads of the store: SCAN, hashes, sorted sets, values as text or
// bytes, whole key contents. A key of another type is that item's WrongType, never a defect.

/** Runs `test` on an island of its own, seeded with keys of every type (`k` names them). */
const onIsland = <A, E>(test: (k: (name: string) => string, prefix: string) => Effect.Effect<A, E, Valkey>) => {
  const prefix = randomPrefix("keyreads")
  const k = (name: string) => `${prefix}:${name}`
  return Effect.andThen(seed(k, prefix), test(k, prefix)).pipe(Effect.provide(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))
}

/** Keys of every type, and a key of another island whose prefix starts the same. */
const seed = (k: (name: string) => string, prefix: string) => Effect.gen(function* () {
  const valkey = yield* Valkey
  yield* unsafeCommand(valkey, "seed", (c) =>
    c
      .multi()
      .hset(k("h1"), "a", "1", "b", "2")
      .hset(k("h2"), "a", "3")
      .set(k("s"), "text", "PX", 60_000)
      .set(k("bin"), Buffer.from([0xff, 0x00, 0x80]))
      .hset(k("hbin"), "f", Buffer.from([0xfe, 0x01]))
      .zadd(k("z"), 2, "two", 1, "one")
      .sadd(k("set"), "b", "a")
      .rpush(k("list"), "x", "y")
      .exec()
  )
  yield* unsafeCommand(valkey, "seed another island", (c) => c.set(`${prefix}x:foreign`, "not ours"))
})

const wrongType = (key: string, expected: string, actual: string) => Result.fail(expect.objectContaining({ _tag: "WrongType", key, expected, actual }))

describe("KeyReads", () => {
  it.effect("reads hashes, fields, lengths and sorted sets in key order; a missing key is empty, a key of another type its WrongType", () =>
    onIsland((k) => Effect.gen(function* () {
      const valkey = yield* Valkey
      expect(yield* KeyReads.hashes(valkey, [k("h1"), k("none"), k("s")])).toEqual([
        Result.succeed({ a: "1", b: "2" }),
        Result.succeed({}),
        wrongType(k("s"), "hash", "string")
      ])
      const fields = [{ key: k("h1"), field: "b" }, { key: k("h2"), field: "b" }, { key: k("z"), field: "a" }]
      expect(yield* KeyReads.hashFields(valkey, fields)).toEqual([Result.succeed("2"), Result.succeed(null), wrongType(k("z"), "hash", "zset")])
      expect(yield* KeyReads.hashFieldsExist(valkey, fields)).toEqual([Result.succeed(true), Result.succeed(false), wrongType(k("z"), "hash", "zset")])
      expect(yield* KeyReads.hashLengths(valkey, [k("h1"), k("none"), k("list")])).toEqual([Result.succeed(2), Result.succeed(0), wrongType(k("list"), "hash", "list")])
      expect(yield* KeyReads.sortedSetMembers(valkey, [k("z"), k("none"), k("h1")])).toEqual([Result.succeed(["one", "two"]), Result.succeed([]), wrongType(k("h1"), "zset", "hash")])
      expect(yield* KeyReads.exist(valkey, [k("z"), k("none")])).toEqual([true, false])
      expect(yield* KeyReads.hashes(valkey, [])).toEqual([])
    }))
  )

  it.effect("reads values and hash values as text or as the bytes stored", () =>
    onIsland((k) => Effect.gen(function* () {
      const valkey = yield* Valkey
      expect(yield* KeyReads.values(valkey, [k("s"), k("none"), k("h1")])).toEqual(["text", null, null])
      expect(yield* KeyReads.values(valkey, [k("bin")], "bytes")).toEqual([Buffer.from([0xff, 0x00, 0x80])])
      expect(yield* KeyReads.hashValues(valkey, k("hbin"), ["f", "g"], "bytes")).toEqual([Buffer.from([0xfe, 0x01]), null])
      expect(yield* KeyReads.hashValues(valkey, k("h1"), ["b", "a"])).toEqual(["2", "1"])
      expect(yield* Effect.flip(KeyReads.hashValues(valkey, k("s"), ["f"]))).toMatchObject({ _tag: "WrongType", key: k("s"), expected: "hash", actual: "string" })
    }))
  )

  it.effect("scans by pattern, lists the island's keys (not another island's) and reads whole contents", () =>
    onIsland((k, prefix) => Effect.gen(function* () {
      const valkey = yield* Valkey
      const scanned: Array<string> = []
      yield* KeyReads.scan(valkey, `${prefix}:h*`, (keys) => Effect.sync(() => void scanned.push(...keys)))
      expect(scanned.sort()).toEqual([k("h1"), k("h2"), k("hbin")])
      const keys = yield* KeyReads.islandKeys(valkey)
      expect(keys).toEqual(["bin", "h1", "h2", "hbin", "list", "s", "set", "z"].map(k))
      const contents = yield* KeyReads.contents(valkey, [k("h1"), k("s"), k("set"), k("z"), k("list"), k("none")])
      expect(contents.map(({ key, type, value }) => ({ key, type, value }))).toEqual([
        { key: k("h1"), type: "hash", value: [["a", "1"], ["b", "2"]] },
        { key: k("s"), type: "string", value: "text" },
        { key: k("set"), type: "set", value: ["a", "b"] },
        { key: k("z"), type: "zset", value: [["one", "1"], ["two", "2"]] },
        { key: k("list"), type: "list", value: ["x", "y"] },
        { key: k("none"), type: "none", value: null }
      ])
      expect(contents[1]!.expiresInMs).toBeGreaterThan(0)
      expect(contents[0]!.expiresInMs).toBeNull()
    }))
  )

  it.effect("the main entry lends no raw client: it is on @microdcs/store/unsafe alone", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      for (const name of ["command", "durable", "dedicated"]) expect(name in valkey, name).toBe(false)
      const main: Record<string, unknown> = yield* Effect.promise(() => import("@microdcs/store"))
      const unsafe: Record<string, unknown> = yield* Effect.promise(() => import("@microdcs/store/unsafe"))
      expect(Object.keys(unsafe)).toEqual(["unsafeCommand"])
      expect(main["unsafeCommand"]).toBeUndefined()
    }).pipe(Effect.provide(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("keyreads") })))
  )
})
