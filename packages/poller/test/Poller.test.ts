import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Queue, Ref } from "effect"
import { Valkey, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import type { PollerEntry } from "@microdcs/poller"
import { append, base, Boom, elapsedSince, freshLayer, pendingCount, recorder, register, start, until } from "./PollerKit.js"

describe("Poller wake-up", () => {
  it.live("handles an entry right after its nudge, long before the fallback round; an existing group is reused", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const valkey = yield* Valkey
      yield* register("s1")
      expect(yield* streams.ensureGroup(yield* valkey.key("sfcWork", { scope: "s1" }), "engine")).toBe(true)
      const { seen, handler } = yield* recorder
      const { poller } = yield* start({ ...base, handler })
      expect(yield* poller.scopes).toEqual(["s1"])
      const t0 = Date.now()
      const id = yield* append("s1", { job: "j1" })
      const entry = yield* Queue.take(seen).pipe(Effect.timeout("4 seconds"))
      expect(elapsedSince(t0)).toBeLessThan(1000)
      expect(entry).toMatchObject({ kind: "sfc", scope: "s1", id, fields: { job: "j1" }, deliveries: 1 })
      yield* until(pendingCount("s1"), (n) => n === 0)
      expect(yield* poller.stats).toMatchObject({ read: 1, processed: 1, failed: 0, scopes: 1 })
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("without nudges (lost), entries are handled by the fallback round", () =>
    Effect.gen(function* () {
      yield* register("quiet")
      const { seen, handler } = yield* recorder
      yield* start({ ...base, fallbackIntervalMs: 300, handler })
      const t0 = Date.now()
      const id = yield* append("quiet", { job: "j" }, { nudge: false })
      const entry = yield* Queue.take(seen).pipe(Effect.timeout("4 seconds"))
      expect(entry.id).toBe(id)
      expect(elapsedSince(t0)).toBeLessThan(300 + 500)
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("a scope created after start is consumed without a restart (registry or nudge)", () =>
    Effect.gen(function* () {
      const { seen, handler } = yield* recorder
      const { poller } = yield* start({ ...base, fallbackIntervalMs: 300, handler })
      expect(yield* poller.scopes).toEqual([])
      const byRegistry = yield* append("late-registered", { job: "a" }, { nudge: false })
      expect((yield* Queue.take(seen).pipe(Effect.timeout("4 seconds"))).id).toBe(byRegistry)
      const t0 = Date.now()
      const byNudge = yield* append("late-nudged", { job: "b" }, { register: false })
      expect((yield* Queue.take(seen).pipe(Effect.timeout("4 seconds"))).id).toBe(byNudge)
      expect(elapsedSince(t0)).toBeLessThan(300 + 500)
      expect(yield* poller.scopes).toEqual(["late-nudged", "late-registered"])
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )
})

describe("Poller failures", () => {
  it.live("retries a failing entry with backoff and acknowledges it once it succeeds", () =>
    Effect.gen(function* () {
      const deliveries = yield* Ref.make<Array<number>>([])
      const handler = (entry: PollerEntry) =>
        Ref.update(deliveries, (d) => [...d, entry.deliveries]).pipe(
          Effect.andThen(entry.deliveries < 3 ? Effect.fail(new Boom({ message: "not yet" })) : Effect.void)
        )
      const { poller } = yield* start({ ...base, maxDeliveries: 5, handler })
      yield* append("flaky", { job: "j" })
      yield* until(poller.stats, (s) => s.processed === 1)
      expect(yield* Ref.get(deliveries)).toEqual([1, 2, 3])
      expect(yield* poller.stats).toMatchObject({ processed: 1, failed: 2, retried: 2, deadLettered: 0 })
      expect(yield* pendingCount("flaky")).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("dead-letters an entry after maxDeliveries failures, with its error, id and delivery count", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const calls = yield* Ref.make(0)
      const handler = (_: PollerEntry) => Ref.update(calls, (n) => n + 1).pipe(Effect.andThen(Effect.fail(new Boom({ message: "always" }))))
      const { poller } = yield* start({ ...base, maxDeliveries: 3, handler })
      const id = yield* append("poison", { job: "bad" })
      yield* until(poller.stats, (s) => s.deadLettered === 1)
      expect(yield* Ref.get(calls)).toBe(3)
      expect(yield* pendingCount("poison")).toBe(0)
      const page = yield* streams.readDeadLetters("sfc", "poison")
      expect(page.entries).toHaveLength(1)
      expect(page.entries[0]).toMatchObject({ originalId: id, group: "engine", consumer: "c1", deliveries: 3, fields: { job: "bad" } })
      expect(page.entries[0]!.error).toContain("Boom: always")
      expect(yield* poller.stats).toMatchObject({ failed: 3, deadLettered: 1, processed: 0 })
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("an entry of a consumer killed mid-handler is taken over with XAUTOCLAIM and handled once", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<string>()
      const killed = yield* start({
        ...base,
        consumer: "doomed",
        shutdownGraceMs: 20,
        handler: (entry) => Deferred.succeed(started, entry.id).pipe(Effect.andThen(Effect.never))
      })
      const id = yield* append("orphans", { job: "j" })
      expect(yield* Deferred.await(started).pipe(Effect.timeout("4 seconds"))).toBe(id)
      yield* killed.stop // the handler is interrupted after the grace; nothing acknowledged
      expect(yield* pendingCount("orphans")).toBe(1)
      const { seen, handler } = yield* recorder
      const { poller } = yield* start({ ...base, consumer: "heir", claimIdleMs: 200, claimIntervalMs: 100, handler })
      const taken = yield* Queue.take(seen).pipe(Effect.timeout("4 seconds"))
      expect(taken).toMatchObject({ id, deliveries: 2 })
      yield* until(pendingCount("orphans"), (n) => n === 0)
      // Another claim round passes; nothing is delivered twice.
      yield* Effect.sleep("300 millis")
      expect(yield* Queue.size(seen)).toBe(0)
      expect(yield* poller.stats).toMatchObject({ claimed: 1, processed: 1 })
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )
})

describe("Poller trim and shutdown", () => {
  it.live("trims acknowledged entries but keeps every unacknowledged one", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const handler = (entry: PollerEntry) => (entry.fields["poison"] ? Effect.fail(new Boom({ message: "stuck" })) : Effect.void)
      const { poller } = yield* start({ ...base, trimIntervalMs: 100, maxDeliveries: 100, backoff: { initialMs: 60_000 }, handler })
      const ids = [] as Array<string>
      ids.push(yield* append("trimmed", { job: "0" }, { nudge: false }))
      ids.push(yield* append("trimmed", { job: "1", poison: "yes" }, { nudge: false }))
      ids.push(yield* append("trimmed", { job: "2" }, { nudge: false }))
      ids.push(yield* append("trimmed", { job: "3" }))
      yield* until(poller.stats, (s) => s.processed === 3 && s.trimmed >= 1)
      const stream = yield* valkey.key("sfcWork", { scope: "trimmed" })
      const left = yield* unsafeCommand(valkey, "xrange", (c) => c.xrange(stream, "-", "+"))
      expect(left.map((r) => r[0])).toEqual(ids.slice(1))
      expect(yield* pendingCount("trimmed")).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("on shutdown stops reading, lets the in-flight handler finish and acknowledges it", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const finished = yield* Ref.make(false)
      const handler = (_: PollerEntry) =>
        Deferred.succeed(started, undefined).pipe(Effect.andThen(Effect.sleep("300 millis")), Effect.andThen(Ref.set(finished, true)))
      const running = yield* start({ ...base, handler })
      yield* append("graceful", { job: "slow" })
      yield* Deferred.await(started).pipe(Effect.timeout("4 seconds"))
      yield* running.stop
      expect(yield* Ref.get(finished)).toBe(true)
      expect(yield* pendingCount("graceful")).toBe(0)
      expect(yield* running.poller.stats).toMatchObject({ processed: 1, inFlight: 0 })
      // Stopped: a new entry is left for the next consumer.
      yield* append("graceful", { job: "later" })
      yield* Effect.sleep("100 millis")
      expect(yield* running.poller.stats).toMatchObject({ processed: 1 })
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("bounds concurrent handlers", () =>
    Effect.gen(function* () {
      const running = yield* Ref.make(0)
      const peak = yield* Ref.make(0)
      const handler = (_: PollerEntry) =>
        Ref.updateAndGet(running, (n) => n + 1).pipe(
          Effect.flatMap((n) => Ref.update(peak, (p) => Math.max(p, n))),
          Effect.andThen(Effect.sleep("40 millis")),
          Effect.ensuring(Ref.update(running, (n) => n - 1))
        )
      const { poller } = yield* start({ ...base, concurrency: 2, handler })
      for (let i = 0; i < 4; i++) yield* append("busy-a", { n: String(i) }, { nudge: false })
      for (let i = 0; i < 4; i++) yield* append("busy-b", { n: String(i) }, { nudge: false })
      yield* poller.wake("busy-a")
      yield* poller.wake("busy-b")
      yield* until(poller.stats, (s) => s.processed === 8)
      expect(yield* Ref.get(peak)).toBe(2)
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("rejects bad options before connecting anything", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(start({ ...base, concurrency: 0, handler: () => Effect.void }))
      expect(error).toMatchObject({ _tag: "InvalidInput", field: "concurrency" })
      const badStart = yield* Effect.flip(start({ ...base, groupStartId: "latest", handler: () => Effect.void }))
      expect(badStart).toMatchObject({ _tag: "InvalidInput", field: "groupStartId" })
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )
})
