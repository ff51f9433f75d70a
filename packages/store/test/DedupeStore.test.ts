import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { dedupeHash } from "@microdcs/keyschema"
import { randomPrefix, until } from "@microdcs/test-utils"
import { ClaimResult, DedupeStore, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const layerFor = (prefix: string) => DedupeStore.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))
const prefix = randomPrefix()
const layer = layerFor(prefix)

/** Waits (bounded) until a key has expired: the lease tests depend on real time passing. */
const untilGone = (key: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    yield* until(unsafeCommand(valkey, "exists", (c) => c.exists(key)), (n) => n === 0, { within: "5 seconds", every: "10 millis" })
  })

describe("DedupeStore", () => {
  it.effect("claims, reports the own claim without refreshing it, and marks done", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const valkey = yield* Valkey
      const first = yield* dedupe.claim("plant/a", "ev-1", "t1", 60_000)
      expect(first).toEqual(ClaimResult.Claimed({ key: `${prefix}:ce:dedupe:${dedupeHash("plant/a", "ev-1")}`, alreadyHeld: false }))
      expect(yield* unsafeCommand(valkey, "get", (c) => c.get(first.key))).toBe("processing:t1")
      yield* unsafeCommand(valkey, "shorten", (c) => c.pexpire(first.key, 50_000))
      const again = yield* dedupe.claim("plant/a", "ev-1", "t1", 60_000)
      expect(again).toMatchObject({ _tag: "Claimed", alreadyHeld: true })
      // Nothing refreshed: the TTL is still the shortened one.
      expect(yield* dedupe.leaseRemaining("plant/a", "ev-1")).toBeLessThanOrEqual(50_000)
      yield* dedupe.markDone("plant/a", "ev-1", "t1", 120_000)
      expect(yield* unsafeCommand(valkey, "get", (c) => c.get(first.key))).toBe("done")
      expect(yield* dedupe.leaseRemaining("plant/a", "ev-1")).toBeGreaterThan(60_000)
      // A second claimer sees it done, whatever its token.
      expect((yield* dedupe.claim("plant/a", "ev-1", "t2", 60_000))._tag).toBe("Done")
    }).pipe(Effect.provide(layer))
  )

  it.effect("another token is Busy with the remaining lease", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      yield* dedupe.claim("src", "ev-2", "t1", 60_000)
      const busy = yield* Effect.flip(dedupe.claim("src", "ev-2", "t2", 60_000))
      expect(busy._tag).toBe("Busy")
      expect(busy).toMatchObject({ key: `${prefix}:ce:dedupe:${dedupeHash("src", "ev-2")}` })
      expect(busy._tag === "Busy" && busy.remainingMs).toBeGreaterThan(0)
      expect(busy._tag === "Busy" && busy.remainingMs).toBeLessThanOrEqual(60_000)
    }).pipe(Effect.provide(layer))
  )

  it.effect("release deletes only the caller's own lease", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      yield* dedupe.claim("src", "ev-3", "owner", 60_000)
      expect(yield* dedupe.release("src", "ev-3", "stranger")).toBe(false)
      expect((yield* Effect.flip(dedupe.claim("src", "ev-3", "stranger", 60_000)))._tag).toBe("Busy")
      expect(yield* dedupe.release("src", "ev-3", "owner")).toBe(true)
      expect(yield* dedupe.leaseRemaining("src", "ev-3")).toBe(0)
      expect(yield* dedupe.claim("src", "ev-3", "stranger", 60_000)).toMatchObject({ _tag: "Claimed", alreadyHeld: false })
      // Releasing never removes "done".
      yield* dedupe.markDone("src", "ev-3", "stranger", 60_000)
      expect(yield* dedupe.release("src", "ev-3", "stranger")).toBe(false)
      expect((yield* dedupe.claim("src", "ev-3", "owner", 60_000))._tag).toBe("Done")
    }).pipe(Effect.provide(layer))
  )

  it.effect("markDone keeps a reply with the done mark, and a later claim returns it", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const valkey = yield* Valkey
      const reply = JSON.stringify({ ReturnStatus: 1, JobOrderID: "jo-1" })
      const { key } = yield* dedupe.claim("src", "ev-reply", "t1", 60_000)
      yield* dedupe.markDone("src", "ev-reply", "t1", 120_000, reply)
      expect(yield* unsafeCommand(valkey, "get", (c) => c.get(key))).toBe(`done:${reply}`)
      expect(yield* dedupe.leaseRemaining("src", "ev-reply")).toBeGreaterThan(60_000)
      // Any later claimer learns it is done and gets the kept reply.
      expect(yield* dedupe.claim("src", "ev-reply", "t2", 60_000)).toEqual(ClaimResult.Done({ key, reply }))
      // Still done for release and a late markDone.
      expect(yield* dedupe.release("src", "ev-reply", "t2")).toBe(false)
      const late = yield* Effect.flip(dedupe.markDone("src", "ev-reply", "t2", 60_000))
      expect(late).toMatchObject({ _tag: "LeaseLost", message: expect.stringContaining("already done") })
      expect(yield* unsafeCommand(valkey, "get", (c) => c.get(key))).toBe(`done:${reply}`)
      // Without a reply the mark is plain `done`, and a claim returns no reply.
      yield* dedupe.claim("src", "ev-plain", "t1", 60_000)
      yield* dedupe.markDone("src", "ev-plain", "t1", 60_000)
      expect(yield* dedupe.claim("src", "ev-plain", "t2", 60_000)).toMatchObject({ _tag: "Done", reply: undefined })
    }).pipe(Effect.provide(layer))
  )

  it.effect("a reply that is not JSON, malformed or over the size limit is InvalidInput and changes nothing", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const valkey = yield* Valkey
      const { key } = yield* dedupe.claim("src", "ev-badreply", "t1", 60_000)
      for (const bad of ["", "not json", '"\uD800"', JSON.stringify("x".repeat(valkey.maxDocumentBytes))]) {
        expect(yield* Effect.flip(dedupe.markDone("src", "ev-badreply", "t1", 60_000, bad))).toMatchObject({ _tag: "InvalidInput", field: "reply" })
      }
      // Still claimed by t1, as before.
      expect(yield* unsafeCommand(valkey, "get", (c) => c.get(key))).toBe("processing:t1")
    }).pipe(Effect.provide(layer))
  )

  it.effect("markDone by a token that does not hold the lease is LeaseLost and writes nothing", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const valkey = yield* Valkey
      const { key } = yield* dedupe.claim("src", "ev-4", "owner", 60_000)
      const lost = yield* Effect.flip(dedupe.markDone("src", "ev-4", "stranger", 60_000))
      expect(lost).toMatchObject({ _tag: "LeaseLost", key })
      expect(yield* unsafeCommand(valkey, "get", (c) => c.get(key))).toBe("processing:owner")
      const never = yield* Effect.flip(dedupe.markDone("src", "never-claimed", "owner", 60_000))
      expect(never._tag).toBe("LeaseLost")
    }).pipe(Effect.provide(layer))
  )

  it.live("an expired lease lets another token claim, and the first one's markDone is LeaseLost", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const { key } = yield* dedupe.claim("src", "ev-5", "slow", 30)
      yield* untilGone(key)
      expect(yield* dedupe.leaseRemaining("src", "ev-5")).toBe(0)
      expect((yield* Effect.flip(dedupe.markDone("src", "ev-5", "slow", 60_000)))._tag).toBe("LeaseLost")
      expect(yield* dedupe.claim("src", "ev-5", "fast", 60_000)).toMatchObject({ _tag: "Claimed", alreadyHeld: false })
      expect((yield* Effect.flip(dedupe.markDone("src", "ev-5", "slow", 60_000)))._tag).toBe("LeaseLost")
      yield* dedupe.markDone("src", "ev-5", "fast", 60_000)
    }).pipe(Effect.provide(layer))
  )

  it.effect("concurrent claims with different tokens: exactly one wins", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const results = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) => Effect.result(dedupe.claim("src", "race", `t${i}`, 60_000))),
        { concurrency: "unbounded" }
      )
      expect(results.filter((r) => r._tag === "Success")).toHaveLength(1)
      expect(results.filter((r) => r._tag === "Failure" && r.failure._tag === "Busy")).toHaveLength(7)
    }).pipe(Effect.provide(layer))
  )

  it.effect("(source, id) pairs that would collide when joined naively are different keys", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      yield* dedupe.claim("a:b", "c", "t1", 60_000)
      expect(yield* dedupe.claim("a", "b:c", "t2", 60_000)).toMatchObject({ _tag: "Claimed", alreadyHeld: false })
    }).pipe(Effect.provide(layer))
  )

  it.effect("a key of another type is WrongType, not Busy", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const valkey = yield* Valkey
      const key = `${prefix}:ce:dedupe:${dedupeHash("src", "corrupt")}`
      yield* unsafeCommand(valkey, "corrupt", (c) => c.hset(key, "x", "1"))
      for (const attempt of <ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>>>[
        dedupe.claim("src", "corrupt", "t", 1000),
        dedupe.markDone("src", "corrupt", "t", 1000),
        dedupe.release("src", "corrupt", "t")
      ]) {
        expect(yield* Effect.flip(attempt)).toMatchObject({ _tag: "WrongType", key, expected: "string", actual: "hash" })
      }
      expect(yield* unsafeCommand(valkey, "type", (c) => c.type(key))).toBe("hash")
    }).pipe(Effect.provide(layer))
  )

  it.effect("bad input is InvalidInput and writes nothing", () => {
    const cleanPrefix = randomPrefix("bad")
    return Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const valkey = yield* Valkey
      const cases = [
        [dedupe.claim("", "id", "t", 1000), "source"],
        [dedupe.claim("s", "", "t", 1000), "id"],
        [dedupe.claim("s", "x".repeat(513), "t", 1000), "id"],
        [dedupe.claim("s\uD800", "id", "t", 1000), "source"],
        [dedupe.claim("s", "id", "", 1000), "token"],
        [dedupe.claim("s", "id", "t", 0), "leaseMs"],
        [dedupe.claim("s", "id", "t", 1.5), "leaseMs"],
        [dedupe.claim("s", "id", "t", -5), "leaseMs"],
        [dedupe.markDone("s", "id", "t", 0), "ttlMs"],
        [dedupe.markDone("s", "id", "\uDC00", 1000), "token"],
        [dedupe.release("s", "", "t"), "id"],
        [dedupe.leaseRemaining("", "id"), "source"]
      ] as const
      for (const [attempt, field] of cases) {
        expect(yield* Effect.flip(attempt as Effect.Effect<unknown, { _tag: string }>)).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect(yield* unsafeCommand(valkey, "keys", (c) => c.keys(`${cleanPrefix}:*`))).toEqual([])
    }).pipe(Effect.provide(layerFor(cleanPrefix)))
  })
})
