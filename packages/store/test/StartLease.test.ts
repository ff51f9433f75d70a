import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix, until } from "@microdcs/test-utils"
import { PublisherLease, StartLease, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const layerFor = (prefix: string) =>
  Layer.mergeAll(StartLease.Default, PublisherLease.Default).pipe(
    Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
  )
const prefix = randomPrefix()
const services = layerFor(prefix)

describe("StartLease", () => {
  it.effect("acquires with a 30 s default TTL and stores the holder", () =>
    Effect.gen(function* () {
      const leases = yield* StartLease
      const valkey = yield* Valkey
      expect(yield* leases.acquire("cfg-1", "node-a")).toBe(true)
      expect(yield* leases.holder("cfg-1")).toEqual(Option.some("node-a"))
      const ttl = yield* unsafeCommand(valkey, "pttl", (c) => c.pttl(`${prefix}:lock:poststart:cfg-1`))
      expect(ttl).toBeGreaterThan(25_000)
      expect(ttl).toBeLessThanOrEqual(30_000)
      // Not reentrant (SET NX): a holder that acquires again is refused like anyone else.
      expect(yield* leases.acquire("cfg-1", "node-a")).toBe(false)
      expect(yield* leases.acquire("cfg-1", "node-b")).toBe(false)
    }).pipe(Effect.provide(services))
  )

  it.effect("two holders acquiring at the same time: exactly one gets it", () =>
    Effect.gen(function* () {
      const leases = yield* StartLease
      const results = yield* Effect.all([leases.acquire("cfg-race", "node-a"), leases.acquire("cfg-race", "node-b")], {
        concurrency: "unbounded"
      })
      expect(results.filter(Boolean)).toHaveLength(1)
      const winner = results[0] ? "node-a" : "node-b"
      expect(yield* leases.holder("cfg-race")).toEqual(Option.some(winner))
    }).pipe(Effect.provide(services))
  )

  it.effect("release by a non-holder is false and leaves the lease intact", () =>
    Effect.gen(function* () {
      const leases = yield* StartLease
      const valkey = yield* Valkey
      yield* leases.acquire("cfg-2", "node-a", 60_000)
      expect(yield* leases.release("cfg-2", "node-b")).toBe(false)
      expect(yield* leases.holder("cfg-2")).toEqual(Option.some("node-a"))
      expect(yield* unsafeCommand(valkey, "pttl", (c) => c.pttl(`${prefix}:lock:poststart:cfg-2`))).toBeGreaterThan(50_000)
      expect(yield* leases.release("cfg-2", "node-a")).toBe(true)
      expect(yield* leases.holder("cfg-2")).toEqual(Option.none())
      expect(yield* leases.release("cfg-2", "node-a")).toBe(false)
      expect(yield* leases.acquire("cfg-2", "node-b")).toBe(true)
    }).pipe(Effect.provide(services))
  )

  it.effect("renews only while the caller holds the lease", () =>
    Effect.gen(function* () {
      const leases = yield* StartLease
      const valkey = yield* Valkey
      const key = `${prefix}:lock:poststart:cfg-3`
      yield* leases.acquire("cfg-3", "node-a", 5_000)
      expect(yield* leases.renew("cfg-3", "node-a", 90_000)).toBe(true)
      expect(yield* unsafeCommand(valkey, "pttl", (c) => c.pttl(key))).toBeGreaterThan(80_000)
      expect(yield* leases.renew("cfg-3", "node-b", 200_000)).toBe(false)
      expect(yield* unsafeCommand(valkey, "pttl", (c) => c.pttl(key))).toBeLessThanOrEqual(90_000)
      expect(yield* leases.renew("cfg-absent", "node-a")).toBe(false)
      expect(yield* leases.holder("cfg-absent")).toEqual(Option.none())
    }).pipe(Effect.provide(services))
  )

  it.live("an expired lease can be acquired by another holder; the old holder cannot renew or release it", () =>
    Effect.gen(function* () {
      const leases = yield* StartLease
      yield* leases.acquire("cfg-4", "node-a", 30)
      yield* until(leases.holder("cfg-4"), Option.isNone, { within: "5 seconds", every: "10 millis" })
      expect(yield* leases.acquire("cfg-4", "node-b")).toBe(true)
      expect(yield* leases.renew("cfg-4", "node-a")).toBe(false)
      expect(yield* leases.release("cfg-4", "node-a")).toBe(false)
      expect(yield* leases.holder("cfg-4")).toEqual(Option.some("node-b"))
    }).pipe(Effect.provide(services))
  )

  it.effect("a lease key of another type is WrongType", () =>
    Effect.gen(function* () {
      const leases = yield* StartLease
      const valkey = yield* Valkey
      const key = `${prefix}:lock:poststart:cfg-corrupt`
      yield* unsafeCommand(valkey, "corrupt", (c) => c.sadd(key, "x"))
      for (const attempt of <ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>>>[leases.acquire("cfg-corrupt", "a"), leases.renew("cfg-corrupt", "a"), leases.release("cfg-corrupt", "a"), leases.holder("cfg-corrupt")]) {
        expect(yield* Effect.flip(attempt)).toMatchObject({ _tag: "WrongType", key, expected: "string", actual: "set" })
      }
    }).pipe(Effect.provide(services))
  )

  it.effect("bad input is InvalidInput and writes nothing", () => {
    const cleanPrefix = randomPrefix("bad")
    return Effect.gen(function* () {
      const leases = yield* StartLease
      const publisher = yield* PublisherLease
      const valkey = yield* Valkey
      const cases = [
        [leases.acquire("", "a"), "configId"],
        [leases.acquire("c".repeat(600), "a"), "configId"],
        [leases.acquire("c\uD800", "a"), "configId"],
        [leases.acquire("c", ""), "holder"],
        [leases.acquire("c", "a", 0), "ttlMs"],
        [leases.renew("c", "a", 2.5), "ttlMs"],
        [leases.release("c", "\uDFFF"), "holder"],
        [publisher.acquire("x".repeat(513)), "holder"]
      ] as const
      for (const [attempt, field] of cases) {
        expect(yield* Effect.flip(attempt as Effect.Effect<unknown, { _tag: string }>)).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect(yield* unsafeCommand(valkey, "keys", (c) => c.keys(`${cleanPrefix}:*`))).toEqual([])
    }).pipe(Effect.provide(layerFor(cleanPrefix)))
  })
})

layer(services)("PublisherLease", (it) => {
  it.effect("is the same lease protocol on lock:publisher", () =>
    Effect.gen(function* () {
      const lease = yield* PublisherLease
      const valkey = yield* Valkey
      expect(yield* lease.acquire("pub-1", 10_000)).toBe(true)
      expect(yield* unsafeCommand(valkey, "get", (c) => c.get(`${prefix}:lock:publisher`))).toBe("pub-1")
      expect(yield* lease.acquire("pub-2")).toBe(false)
      expect(yield* lease.renew("pub-1", 60_000)).toBe(true)
      expect(yield* lease.renew("pub-2", 60_000)).toBe(false)
      expect(yield* lease.holder).toEqual(Option.some("pub-1"))
      expect(yield* lease.release("pub-2")).toBe(false)
      expect(yield* lease.release("pub-1")).toBe(true)
      expect(yield* lease.holder).toEqual(Option.none())
    })
  )
})
