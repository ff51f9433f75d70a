import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Result, Fiber, Layer, Ref } from "effect"
import { type Endpoint, randomPrefix, respCommand, type SentinelTopology, startSentinelTopology } from "@microdcs/test-utils"
import { JobOrderDao, Valkey, ValkeyLayer, type ValkeyOptions } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

/**
 * Job orders written through the store while Sentinel fails the primary over: every put that
 * returned success must be on the new primary afterwards (issue 9, item 20). The topology is
 * real (primary, replica, three sentinels as child processes) and the timeouts are generous:
 * sentinel discovery and the demotion of an old primary take seconds on a loaded machine.
 */

const WRITERS = 4
const SCOPE = "line-1"

const storeOptions = (topology: SentinelTopology, prefix: string): ValkeyOptions => ({
  sentinels: topology.sentinelNodes,
  sentinelName: topology.masterName,
  prefix,
  minReplicasAck: 1,
  replicaAckTimeoutMs: 1000
})

/** Job orders put by a few concurrent writers until stopped: which were acknowledged, which failed how. */
const startWriters = Effect.gen(function* () {
  const dao = yield* JobOrderDao
  const acknowledged = yield* Ref.make(new Map<string, string>())
  const failures = yield* Ref.make(new Map<string, number>())
  const stop = yield* Deferred.make<void>()
  const writer = (w: number) =>
    Effect.gen(function* () {
      for (let i = 0; !(yield* Deferred.isDone(stop)); i++) {
        const id = `jo-${w}-${i}`
        const put = yield* Effect.result(dao.put({ id, scope: SCOPE, doc: JSON.stringify({ JobOrderID: id }), priority: 1, expectedVersion: 0 }))
        if (Result.isSuccess(put)) {
          const op = put.success.op
          yield* Ref.update(acknowledged, (m) => new Map(m).set(id, op))
        } else {
          const tag = put.failure._tag
          yield* Ref.update(failures, (m) => new Map(m).set(tag, (m.get(tag) ?? 0) + 1))
          yield* Effect.sleep("50 millis")
        }
        yield* Effect.sleep("10 millis")
      }
    })
  const fibers = yield* Effect.forEach(Array.from({ length: WRITERS }, (_, w) => writer(w)), (w) => Effect.forkChild(w))
  const count = Effect.map(Ref.get(acknowledged), (m) => m.size)
  /** Waits until `more` further puts were acknowledged. */
  const acknowledge = (more: number, timeoutMs = 90_000) =>
    Effect.gen(function* () {
      const target = (yield* count) + more
      const deadline = Date.now() + timeoutMs
      while ((yield* count) < target) {
        if (Date.now() > deadline) {
          const failed = JSON.stringify([...(yield* Ref.get(failures))])
          return yield* Effect.die(new Error(`only ${yield* count} of ${target} puts acknowledged within ${timeoutMs} ms; failures ${failed}`))
        }
        yield* Effect.sleep("50 millis")
      }
    })
  const finish = Effect.gen(function* () {
    yield* Deferred.succeed(stop, undefined)
    yield* Fiber.joinAll(fibers)
    return { acknowledged: yield* Ref.get(acknowledged), failures: yield* Ref.get(failures) }
  })
  return { acknowledge, finish }
})

/** The acknowledged job orders the primary does not hold with the acknowledged operation id. */
const lostOn = (acknowledged: ReadonlyMap<string, string>) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const ids = [...acknowledged.keys()]
    const keys = yield* Effect.forEach(ids, (id) => valkey.key("jobOrder", { id }))
    const ops = yield* unsafeCommand(valkey, "read back", (c) => c.pipeline(keys.map((k) => ["hget", k, "op"])).exec())
    return ids.filter((id, i) => ops?.[i]?.[1] !== acknowledged.get(id))
  })

const withTopology = <A, E, R>(replicas: number, body: (topology: SentinelTopology) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => startSentinelTopology({ replicas, downAfterMs: 1000, failoverTimeoutMs: 10_000 })),
    body,
    (topology) => Effect.promise(() => topology.stop())
  )

describe("Sentinel failover", () => {
  it.live(
    "SENTINEL FAILOVER while job orders are written: acknowledged job orders lost: 0",
    () =>
      withTopology(1, (topology) => {
        const prefix = randomPrefix("sf")
        const store = JobOrderDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer(storeOptions(topology, prefix))))
        return Effect.gen(function* () {
          const old = yield* Effect.promise(() => topology.primary())
          const writers = yield* startWriters
          yield* writers.acknowledge(40)
          // The old primary stays up: Sentinel promotes the replica and demotes the old one later.
          yield* Effect.promise(() => topology.failover())
          const promoted = yield* Effect.promise(() => topology.waitForNewPrimary(old.port))
          // Writes go on once the old primary is a replica of the new one again.
          yield* Effect.promise(() => topology.waitForReplicas(1))
          yield* writers.acknowledge(40)
          const { acknowledged } = yield* writers.finish
          const lost = yield* lostOn(acknowledged)
          expect(promoted.port).not.toBe(old.port)
          expect(lost, `acknowledged job orders lost: ${lost.length} of ${acknowledged.size}`).toEqual([])
        }).pipe(Effect.provide(store))
      }),
    180_000
  )

  it.live(
    "kill -9 of the primary while job orders are written: acknowledged job orders lost: 0",
    () =>
      withTopology(1, (topology) => {
        const prefix = randomPrefix("sk")
        const store = JobOrderDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer(storeOptions(topology, prefix))))
        return Effect.gen(function* () {
          const old = yield* Effect.promise(() => topology.primary())
          const writers = yield* startWriters
          yield* writers.acknowledge(40)
          // The primary dies holding writes its replica never got: without a replica
          // acknowledgement those would have been acknowledged, and then lost.
          const replica = topology.servers()[1]!
          yield* Effect.promise(() => writesOnlyThePrimaryHolds(topology, old, replica))
          yield* Effect.promise(() => topology.kill(old.port))
          topology.thaw(replica.port)
          yield* Effect.promise(() => topology.waitForNewPrimary(old.port))
          // The operator brings the dead node back; it rejoins as a replica and writes go on.
          yield* Effect.promise(() => topology.restartAsReplica(old.port))
          yield* Effect.promise(() => topology.waitForReplicas(1))
          yield* writers.acknowledge(40)
          const { acknowledged } = yield* writers.finish
          const lost = yield* lostOn(acknowledged)
          expect(lost, `acknowledged job orders lost: ${lost.length} of ${acknowledged.size}`).toEqual([])
        }).pipe(Effect.provide(store))
      }),
    180_000
  )
})

/**
 * Cuts the replica off (frozen, so it cannot reconnect, and its link dropped by the primary)
 * and resolves once at least 5 more keys were written on the primary alone: the primary then
 * dies holding writes its replica never got.
 */
const writesOnlyThePrimaryHolds = async (topology: SentinelTopology, primary: Endpoint, replica: Endpoint) => {
  const dbsize = async () => Number(await respCommand(primary.host, primary.port, ["DBSIZE"]))
  topology.freeze(replica.port)
  await respCommand(primary.host, primary.port, ["CLIENT", "KILL", "TYPE", "replica"])
  const before = await dbsize()
  const deadline = Date.now() + 60_000
  while ((await dbsize()) < before + 5) {
    if (Date.now() > deadline) throw new Error("the primary took no writes while its replica was cut off")
    await new Promise((r) => setTimeout(r, 20))
  }
}
