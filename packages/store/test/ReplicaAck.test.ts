import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Result, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix, respCommand } from "@microdcs/test-utils"
import { JobOrderDao, Valkey, ValkeyLayer, valkeyOptionsConfig } from "@microdcs/store"
import { waitCalls, withReplica } from "./ReplicaKit.js"

/** `minReplicasAck`: a write is acknowledged only once replicas confirmed it (WAIT). */

const doc = (id: string) => JSON.stringify({ JobOrderID: id })
const put = (id: string) => Effect.flatMap(JobOrderDao, (dao) => dao.put({ id, scope: "s", doc: doc(id), priority: 1, expectedVersion: 0 }))

const storeOn = (url: string, extra: { readonly minReplicasAck: number; readonly replicaAckTimeoutMs?: number }) =>
  JobOrderDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url, prefix: randomPrefix("ra"), ...extra })))

describe("minReplicasAck settings", () => {
  it.effect("rejects bad settings as InvalidInput naming the field, before connecting", () =>
    Effect.gen(function* () {
      const cases = [
        [{ minReplicasAck: -1 }, "minReplicasAck"],
        [{ minReplicasAck: 1.5 }, "minReplicasAck"],
        [{ minReplicasAck: 1, replicaAckTimeoutMs: 0 }, "replicaAckTimeoutMs"],
        [{ minReplicasAck: 1, replicaAckTimeoutMs: 5000, commandTimeoutMs: 5000 }, "replicaAckTimeoutMs"],
        // Through Sentinel it is on by default, so the timeout is checked as for 1.
        [{ sentinels: [{ host: "127.0.0.1", port: 1 }], replicaAckTimeoutMs: 5000, commandTimeoutMs: 5000 }, "replicaAckTimeoutMs"]
      ] as const
      for (const [settings, field] of cases) {
        // Port 1: nothing listens, so only a check before connecting can give InvalidInput.
        const error = yield* Effect.flip(Effect.provide(Valkey, ValkeyLayer.layer({ url: "redis://127.0.0.1:1", prefix: randomPrefix(), ...settings })))
        expect(error).toMatchObject({ _tag: "InvalidInput", field })
      }
    })
  )

  it.effect("reads VALKEY_MIN_REPLICAS_ACK and VALKEY_REPLICA_ACK_TIMEOUT_MS; rejects a negative count", () =>
    Effect.gen(function* () {
      const read = (env: Record<string, string>) =>
        Effect.provideService(valkeyOptionsConfig, ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env))
      const options = yield* read({ VALKEY_MIN_REPLICAS_ACK: "1", VALKEY_REPLICA_ACK_TIMEOUT_MS: "250" })
      expect(options).toMatchObject({ minReplicasAck: 1, replicaAckTimeoutMs: 250 })
      // Unset stays unset: the store decides when it connects (through Sentinel: on), an explicit 0 is off.
      const unset = yield* read({})
      expect(unset.minReplicasAck).toBeUndefined()
      expect(unset.replicaAckTimeoutMs).toBe(1000)
      expect(yield* read({ VALKEY_MIN_REPLICAS_ACK: "0" })).toMatchObject({ minReplicasAck: 0 })
      const bad = yield* Effect.result(read({ VALKEY_MIN_REPLICAS_ACK: "-1" }))
      expect(Result.isFailure(bad) && String(bad.failure)).toContain("VALKEY_MIN_REPLICAS_ACK")
    })
  )
})

describe("minReplicasAck without a replica", () => {
  it.live("a put is UnknownOutcome, and the outcome check does not call it landed", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const op = "op-unconfirmed"
      const failed = yield* Effect.flip(dao.put({ id: "jo-1", scope: "s", doc: doc("jo-1"), priority: 1, expectedVersion: 0, op }))
      expect(failed._tag).toBe("UnknownOutcome")
      expect(failed.message).toContain("0 of 1 replicas")
      // The write is on the primary, but only there: the check must not report it landed.
      const check = yield* Effect.result(dao.outcome("jo-1", op))
      expect(Result.isFailure(check) && check.failure._tag).toBe("UnknownOutcome")
    }).pipe(Effect.provide(storeOn(inject("valkeyUrl"), { minReplicasAck: 1, replicaAckTimeoutMs: 200 })))
  )
})

describe("minReplicasAck with a replica", () => {
  it.live("confirmed puts succeed; puts sent together share one WAIT; the NOSCRIPT fallback is confirmed too", () =>
    withReplica((primary) =>
      Effect.gen(function* () {
        const dao = yield* JobOrderDao
        const ids = Array.from({ length: 50 }, (_, i) => `jo-${i}`)
        const before = yield* Effect.promise(() => waitCalls(primary))
        yield* Effect.forEach(ids, put, { concurrency: "unbounded" })
        const waits = (yield* Effect.promise(() => waitCalls(primary))) - before
        expect(waits).toBeGreaterThan(0)
        expect(waits).toBeLessThan(ids.length)
        yield* Effect.promise(() => respCommand(primary.host, primary.port, ["SCRIPT", "FLUSH"]))
        expect((yield* put("jo-after-flush")).version).toBe(1)
        expect((yield* dao.get("jo-after-flush")).version).toBe(1)
        expect(yield* dao.outcome("jo-0", (yield* dao.get("jo-0")).op)).toEqual(Option.some(1))
      }).pipe(Effect.provide(storeOn(primary.url, { minReplicasAck: 1, replicaAckTimeoutMs: 2000 })))
    )
  )

  it.live("a putMany after SCRIPT FLUSH: every item written, the fallback's writes confirmed by a WAIT sent after them", () =>
    withReplica((primary) =>
      Effect.gen(function* () {
        const dao = yield* JobOrderDao
        yield* put("jo-warm")
        yield* Effect.promise(() => respCommand(primary.host, primary.port, ["SCRIPT", "FLUSH"]))
        const before = yield* Effect.promise(() => waitCalls(primary))
        const ids = Array.from({ length: 5 }, (_, i) => `jo-many-${i}`)
        const outcomes = yield* dao.putMany(ids.map((id) => ({ id, scope: "s", doc: doc(id), priority: 1, expectedVersion: 0 })))
        expect(outcomes.map((o) => Result.isSuccess(o) && o.success.version)).toEqual([1, 1, 1, 1, 1])
        // One WAIT for the refused EVALSHAs, at least one more for the EVALs that wrote.
        expect((yield* Effect.promise(() => waitCalls(primary))) - before).toBeGreaterThanOrEqual(2)
      }).pipe(Effect.provide(storeOn(primary.url, { minReplicasAck: 1, replicaAckTimeoutMs: 2000 })))
    )
  )
})
