import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { randomPrefix } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import { PublisherCursors, PublisherLease, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { admit, caughtUp, jobOrder, retainedUnder, startPublisher, store, until } from "./Kit.js"

const broker = mosquittoForFile()

/** A short lease (renewed every 500 ms, a standby tries every 500 ms) keeps takeovers quick. */
const island = () => {
  const topicPrefix = randomPrefix("mqtt")
  return {
    valkeyPrefix: randomPrefix("pub"),
    base: topicPrefix,
    options: { prefix: topicPrefix, leaseTtlMs: 1500, fallbackIntervalMs: 100 }
  }
}

/** Writes the lease as another instance would hold it (a crashed one, or one that took over). */
const holdLeaseAs = (holder: string, ttlMs: number) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = valkey.keys.key("publisherLease", {}) as string
    yield* unsafeCommand(valkey, "set lease", (c) => c.set(key, holder, "PX", ttlMs))
  })

describe("Publisher lease", () => {
  it.live("two publishers on one island: only the lease holder publishes; the other takes over when it stops", () => {
    const { valkeyPrefix, base, options } = island()
    return Effect.gen(function* () {
      const a = yield* startPublisher(broker.url, valkeyPrefix, { ...options, instanceId: "instance-a" })
      yield* until(a.publisher.isActive, (active) => active)
      const b = yield* startPublisher(broker.url, valkeyPrefix, { ...options, instanceId: "instance-b" })

      yield* admit("line-1", jobOrder("jo-1", 1))
      yield* admit("line-1", jobOrder("jo-2", 2))
      yield* caughtUp("line-1")
      const statsA = yield* a.publisher.stats
      expect(statsA).toMatchObject({ active: true, activations: 1 })
      expect(statsA.published).toBeGreaterThanOrEqual(3)
      expect(yield* b.publisher.stats).toEqual({ published: 0, deleted: 0, batches: 0, activations: 0, tooLarge: 0, active: false })
      expect(yield* Effect.flatMap(PublisherLease, (lease) => lease.holder)).toEqual(Option.some("instance-a"))

      // A clean stop releases the lease, so the standby's next try takes it.
      yield* a.stop
      yield* until(b.publisher.isActive, (active) => active)
      const frozenA = yield* a.publisher.stats
      expect(frozenA.active).toBe(false)
      yield* admit("line-1", jobOrder("jo-3", 3))
      yield* caughtUp("line-1")
      const retained = yield* retainedUnder(broker.url, base)
      expect(retained.has(`${base}/line-1/order/jo-3`)).toBe(true)
      expect((yield* b.publisher.stats).published).toBeGreaterThan(0)
      expect(yield* a.publisher.stats).toEqual(frozenA)
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })

  it.live("a standby takes over once the lease of a holder that died without releasing it expires", () => {
    const { valkeyPrefix, base, options } = island()
    return Effect.gen(function* () {
      yield* holdLeaseAs("crashed-instance", 1200)
      yield* admit("line-1", jobOrder("jo-1", 1))
      const standby = yield* startPublisher(broker.url, valkeyPrefix, options)
      expect(yield* standby.publisher.isActive).toBe(false)
      yield* until(standby.publisher.isActive, (active) => active)
      yield* caughtUp("line-1")
      expect((yield* retainedUnder(broker.url, base)).has(`${base}/line-1/order/jo-1`)).toBe(true)
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })

  it.live("a publisher that loses its lease stops publishing at once and resumes after taking it again", () => {
    const { valkeyPrefix, base, options } = island()
    return Effect.gen(function* () {
      const { publisher } = yield* startPublisher(broker.url, valkeyPrefix, { ...options, instanceId: "instance-a" })
      yield* until(publisher.isActive, (active) => active)
      yield* admit("line-1", jobOrder("jo-1", 1))
      yield* caughtUp("line-1")

      // Another instance took the lease (say, ours expired during a long pause).
      yield* holdLeaseAs("instance-b", 2000)
      yield* until(publisher.isActive, (active) => !active)
      const cursors = yield* PublisherCursors
      const cursor = yield* cursors.get("line-1")
      // The scope's first batch also republishes the metadata (a new scope), possibly just after
      // the cursor moved: count from when publishing has settled.
      let published = (yield* publisher.stats).published
      for (;;) {
        yield* Effect.sleep("300 millis")
        const now = (yield* publisher.stats).published
        if (now === published) break
        published = now
      }
      yield* admit("line-1", jobOrder("jo-2", 2))
      // Several nudges and fallback rounds would have published it by now, had it been active.
      yield* Effect.sleep("300 millis")
      expect(yield* cursors.get("line-1")).toEqual(cursor)
      expect((yield* publisher.stats).published).toBe(published)
      expect((yield* retainedUnder(broker.url, base)).has(`${base}/line-1/order/jo-2`)).toBe(false)

      // The other holder's lease runs out; ours is taken again and the backlog published.
      yield* until(publisher.isActive, (active) => active)
      yield* caughtUp("line-1")
      expect((yield* retainedUnder(broker.url, base)).has(`${base}/line-1/order/jo-2`)).toBe(true)
      expect((yield* publisher.stats).activations).toBe(2)
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })

  it.live("a publisher whose lease is taken stops before its next batch, long before its next renewal", () => {
    const { valkeyPrefix, base, options } = island()
    return Effect.gen(function* () {
      // Renewed only every 20 s: the renewal cannot be what stops it within the test's deadlines.
      const { publisher } = yield* startPublisher(broker.url, valkeyPrefix, { ...options, leaseTtlMs: 60_000, instanceId: "instance-a" })
      yield* until(publisher.isActive, (active) => active)
      yield* admit("line-1", jobOrder("jo-1", 1))
      yield* caughtUp("line-1")
      const cursors = yield* PublisherCursors
      const cursor = yield* cursors.get("line-1")
      // The scope's first batch also republishes the metadata (a new scope), possibly just after
      // the cursor moved: count from when publishing has settled.
      let published = (yield* publisher.stats).published
      for (;;) {
        yield* Effect.sleep("300 millis")
        const now = (yield* publisher.stats).published
        if (now === published) break
        published = now
      }

      // Another instance holds the lease now (an operator released ours, and it took over).
      yield* holdLeaseAs("instance-b", 60_000)
      yield* admit("line-1", jobOrder("jo-2", 2))
      yield* until(publisher.isActive, (active) => !active)
      expect(yield* cursors.get("line-1")).toEqual(cursor)
      expect((yield* publisher.stats).published).toBe(published)
      expect((yield* retainedUnder(broker.url, base)).has(`${base}/line-1/order/jo-2`)).toBe(false)
      expect(yield* Effect.flatMap(PublisherLease, (lease) => lease.holder)).toEqual(Option.some("instance-b"))
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })
})
