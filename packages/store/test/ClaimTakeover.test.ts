import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { dedupeTakeover } from "@microdcs/lua-scripts"
import { randomPrefix } from "@microdcs/test-utils"
import { ClaimHolders, claimToken, claimTokenHolder, DedupeStore, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

/**
 * A dedupe claim taken over from a holder that died: its token names the holder, whose liveness
 * key (`ClaimHolders`) is renewed while it runs. A waiter takes over once that key is gone, never
 * while it lives, and the dead holder's done mark or release then finds the waiter's claim.
 */

const layerFor = (prefix: string) =>
  Layer.mergeAll(DedupeStore.Default, ClaimHolders.Default).pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))
const prefix = randomPrefix("take")
const layer = layerFor(prefix)

const LEASE_MS = 60_000

const stored = (key: string) => Effect.flatMap(Valkey, (valkey) => unsafeCommand(valkey, "get", (c) => c.get(key)))

describe("claim takeover", () => {
  it("a claim token names its holder; a token made otherwise names none", () => {
    const token = claimToken("island-1.run")
    expect(token).toMatch(/^[0-9a-f-]{36}@island-1\.run$/)
    expect(claimToken("island-1.run")).not.toBe(token)
    expect(claimTokenHolder(token)).toBe("island-1.run")
    expect(claimTokenHolder(claimToken("a@b/c"))).toBe("a@b/c")
    for (const plain of ["t1", "owner@island", "not-a-uuid@island", `${token.slice(0, 35)}@x`]) expect(claimTokenHolder(plain)).toBeUndefined()
  })

  it.effect("the claim of a holder without a liveness key is taken over at once; the dead holder's done mark is LeaseLost, its release gives nothing back", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const dead = claimToken("dead.1")
      const { key } = yield* dedupe.claim("src", "ev-dead", dead, LEASE_MS)
      const waiter = claimToken("live.1")
      expect(yield* dedupe.claim("src", "ev-dead", waiter, LEASE_MS)).toMatchObject({ _tag: "Claimed", alreadyHeld: false, takenOverFrom: "dead.1" })
      expect(yield* stored(key)).toBe(`processing:${waiter}`)
      expect(yield* dedupe.leaseRemaining("src", "ev-dead")).toBeGreaterThan(LEASE_MS - 5_000)
      expect(yield* Effect.flip(dedupe.markDone("src", "ev-dead", dead, 60_000))).toMatchObject({ _tag: "LeaseLost", key })
      expect(yield* dedupe.release("src", "ev-dead", dead)).toBe(false)
      expect(yield* stored(key)).toBe(`processing:${waiter}`)
      // The waiter's claim is an ordinary one now: held again by itself, then done.
      expect(yield* dedupe.claim("src", "ev-dead", waiter, LEASE_MS)).toMatchObject({ _tag: "Claimed", alreadyHeld: true })
      yield* dedupe.markDone("src", "ev-dead", waiter, 60_000, '{"ok":1}')
      expect(yield* dedupe.claim("src", "ev-dead", dead, LEASE_MS)).toMatchObject({ _tag: "Done", reply: '{"ok":1}' })
    }).pipe(Effect.provide(layer))
  )

  it.effect("a live holder's claim is Busy, with the time to look again no later than its liveness's end", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const liveness = yield* (yield* ClaimHolders).of("alive.1", 3_000)
      yield* liveness.beat
      const holder = claimToken("alive.1")
      const { key } = yield* dedupe.claim("src", "ev-live", holder, LEASE_MS)
      const busy = yield* Effect.flip(dedupe.claim("src", "ev-live", claimToken("other.1"), LEASE_MS))
      expect(busy).toMatchObject({ _tag: "Busy", key })
      expect(busy._tag === "Busy" && busy.remainingMs).toBeGreaterThan(0)
      expect(busy._tag === "Busy" && busy.remainingMs).toBeLessThanOrEqual(3_000)
      expect(yield* Effect.flip(dedupe.claimWithAdmission("src", "ev-live", claimToken("other.2"), LEASE_MS, { id: "jo-x", scope: "s" }))).toMatchObject({ _tag: "Busy" })
      expect(yield* stored(key)).toBe(`processing:${holder}`)
      // Once it is gone (the holder stopped, or its key expired), the claim is taken over.
      yield* liveness.forget
      expect(yield* dedupe.claim("src", "ev-live", claimToken("other.1"), LEASE_MS)).toMatchObject({ _tag: "Claimed", takenOverFrom: "alive.1" })
    }).pipe(Effect.provide(layer))
  )

  it.effect("a liveness key of another type counts as alive", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const valkey = yield* Valkey
      yield* unsafeCommand(valkey, "odd liveness", (c) => c.hset(`${prefix}:ce:holder:odd.1`, "x", "1"))
      yield* dedupe.claim("src", "ev-odd", claimToken("odd.1"), LEASE_MS)
      const busy = yield* Effect.flip(dedupe.claim("src", "ev-odd", claimToken("other.1"), LEASE_MS))
      // No TTL on the odd key: the lease's end is when to look again.
      expect(busy._tag === "Busy" && busy.remainingMs).toBeGreaterThan(LEASE_MS - 5_000)
    }).pipe(Effect.provide(layer))
  )

  it.effect("a token that names no holder is freed by its lease's end alone", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      yield* dedupe.claim("src", "ev-plain", "plain-token", LEASE_MS)
      const busy = yield* Effect.flip(dedupe.claim("src", "ev-plain", claimToken("other.1"), LEASE_MS))
      expect(busy._tag === "Busy" && busy.remainingMs).toBeGreaterThan(LEASE_MS - 5_000)
    }).pipe(Effect.provide(layer))
  )

  it.effect("claimWithAdmission takes over too (the processor then reads the admission itself)", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      yield* dedupe.claim("src", "ev-adm", claimToken("dead.2"), LEASE_MS)
      const taken = yield* dedupe.claimWithAdmission("src", "ev-adm", claimToken("live.2"), LEASE_MS, { id: "jo-adm", scope: "s" })
      expect(taken).toMatchObject({ _tag: "Claimed", alreadyHeld: false, takenOverFrom: "dead.2" })
      expect(taken._tag === "Claimed" && taken.admission).toBeUndefined()
    }).pipe(Effect.provide(layer))
  )

  it.effect("the takeover script takes only the claim the waiter found: a claim that changed meanwhile, or is done, is not taken", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const valkey = yield* Valkey
      const first = claimToken("dead.3")
      const { key } = yield* dedupe.claim("src", "ev-moved", first, LEASE_MS)
      // Another waiter took it over first: the one that found `first` must not take it again.
      const second = claimToken("dead.4")
      yield* unsafeCommand(valkey, "overtaken", (c) => c.set(key, `processing:${second}`, "PX", LEASE_MS))
      const holderKey = valkey.keys.key("dedupeHolder", { holder: "dead.3" }) as string
      const late = yield* valkey.script(dedupeTakeover, { dedupe: key, holder: holderKey }, { found: first, token: claimToken("late.1"), leaseMs: LEASE_MS })
      expect(late).toMatchObject({ status: "busy" })
      expect(yield* stored(key)).toBe(`processing:${second}`)
      yield* dedupe.markDone("src", "ev-moved", second, 60_000)
      const done = yield* valkey.script(dedupeTakeover, { dedupe: key, holder: holderKey }, { found: first, token: claimToken("late.1"), leaseMs: LEASE_MS })
      expect(done).toEqual({ status: "done", reply: null })
    }).pipe(Effect.provide(layer))
  )

  it.effect("a liveness for a holder or lifetime no key can hold is InvalidInput and writes nothing", () => {
    const cleanPrefix = randomPrefix("badholder")
    return Effect.gen(function* () {
      const holders = yield* ClaimHolders
      const valkey = yield* Valkey
      expect(yield* Effect.flip(holders.of("", 3_000))).toMatchObject({ _tag: "InvalidInput", field: "holder" })
      expect(yield* Effect.flip(holders.of("x".repeat(513), 3_000))).toMatchObject({ _tag: "InvalidInput", field: "holder" })
      expect(yield* Effect.flip(holders.of("ok", 0))).toMatchObject({ _tag: "InvalidInput", field: "ttlMs" })
      expect(yield* Effect.flip(holders.of("ok", 1.5))).toMatchObject({ _tag: "InvalidInput", field: "ttlMs" })
      expect(yield* unsafeCommand(valkey, "keys", (c) => c.keys(`${cleanPrefix}:*`))).toEqual([])
    }).pipe(Effect.provide(layerFor(cleanPrefix)))
  })
})
