import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomPrefix, type SentinelTopology, startSentinelTopology } from "@microdcs/test-utils"
import { JobOrderDao, Valkey, ValkeyLayer, type ValkeyOptions } from "@microdcs/store"

/**
 * Through Sentinel an acknowledged write is safe by default: without an explicit
 * `minReplicasAck`, every write waits for one replica's confirmation when Sentinel knows a
 * replica (a failover would promote it), so a write only the primary holds is never
 * acknowledged. A primary alone (nothing to fail over to) needs none, and an explicit 0 turns it off.
 */

const put = (id: string) =>
  Effect.flatMap(JobOrderDao, (dao) => dao.put({ id, scope: "s", doc: JSON.stringify({ JobOrderID: id }), priority: 1, expectedVersion: 0 }))

const storeThrough = (topology: SentinelTopology, extra: Partial<ValkeyOptions> = {}) =>
  JobOrderDao.Default.pipe(
    Layer.provideMerge(
      ValkeyLayer.layer({ sentinels: topology.sentinelNodes, sentinelName: topology.masterName, prefix: randomPrefix("sra"), replicaAckTimeoutMs: 3000, ...extra })
    )
  )

describe("replica acknowledgement through Sentinel, at default settings", () => {
  let topology: SentinelTopology
  beforeAll(async () => {
    topology = await startSentinelTopology({ replicas: 1, sentinels: 1 })
  }, 120_000)
  afterAll(async () => {
    await topology?.stop()
  })

  it.live(
    "a write waits for the replica: with the replica frozen it is UnknownOutcome, never acknowledged; an explicit 0 turns that off",
    () =>
      Effect.gen(function* () {
        const replica = topology.servers()[1]!
        // Generous WAIT timeout: on a loaded machine an online replica may take more than 300 ms to confirm.
        yield* Effect.promise(() => topology.waitForReplicas(1))
        const defaulted = yield* Effect.scoped(
          Effect.gen(function* () {
            expect((yield* Valkey).minReplicasAck).toBe(1)
            expect((yield* put("jo-synced")).version).toBe(1)
            topology.freeze(replica.port)
            // Executed on the primary alone: a failover now would lose it, so it is not acknowledged.
            const unconfirmed = yield* Effect.flip(put("jo-primary-only")).pipe(Effect.ensuring(Effect.sync(() => topology.thaw(replica.port))))
            return unconfirmed
          }).pipe(Effect.provide(storeThrough(topology)))
        )
        expect(defaulted._tag).toBe("UnknownOutcome")
        expect(defaulted.message).toContain("0 of 1 replicas")
        expect(defaulted.message).toContain("3000 ms")

        yield* Effect.promise(() => topology.waitForReplicas(1))
        yield* Effect.scoped(
          Effect.gen(function* () {
            expect((yield* Valkey).minReplicasAck).toBe(0)
            topology.freeze(replica.port)
            const acknowledged = yield* put("jo-off").pipe(Effect.ensuring(Effect.sync(() => topology.thaw(replica.port))))
            expect(acknowledged.version).toBe(1)
          }).pipe(Effect.provide(storeThrough(topology, { minReplicasAck: 0 })))
        )
      }),
    60_000
  )
})

describe("replica acknowledgement through Sentinel with a primary alone", () => {
  it.live(
    "Sentinel knows no replica: writes are acknowledged at default settings, none waited for",
    () =>
      Effect.acquireUseRelease(
        Effect.promise(() => startSentinelTopology({ replicas: 0, sentinels: 1 })),
        (topology) =>
          Effect.gen(function* () {
            expect((yield* Valkey).minReplicasAck).toBe(0)
            expect((yield* put("jo-alone")).version).toBe(1)
          }).pipe(Effect.provide(storeThrough(topology))),
        (topology) => Effect.promise(() => topology.stop())
      ),
    120_000
  )

  it.effect("no sentinel answers the question: StoreUnavailable, nothing connected", () =>
    Effect.gen(function* () {
      // Port 1: nothing listens.
      const options = { sentinels: [{ host: "127.0.0.1", port: 1 }], prefix: randomPrefix("sra"), connectTimeoutMs: 500 }
      const error = yield* Effect.flip(Effect.provide(Valkey, ValkeyLayer.layer(options)))
      expect(error).toMatchObject({ _tag: "StoreUnavailable", operation: "ask Sentinel for the primary's replicas" })
      expect(error.message).toContain("127.0.0.1:1")
    })
  )
})
