import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Queue, Ref } from "effect"
import { Valkey, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import type { PollerEntry } from "@microdcs/poller"
import { append, base, freshLayer, start, until } from "./PollerKit.js"

/** Long enough that the idle-time takeover (XAUTOCLAIM) plays no part in these tests. */
const NEVER_IDLE = { claimIdleMs: 120_000 } as const

/** A heartbeat lapses, then the entries move within this long (one takeover check plus slack for a loaded machine). */
const TAKEOVER_WITHIN_MS = 5000

describe("Poller takeover of dead consumers", () => {
  it.live(
    "takes over a dead consumer's entries within 5 s of its heartbeat lapsing, never before, and never a live slow consumer's",
    () =>
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const streams = yield* ValkeyStreams
        const stream = yield* valkey.key("sfcWork", { scope: "takeover" })
        yield* streams.ensureGroup(stream, "engine")

        // A consumer that read three entries and renewed its heartbeat once, then died.
        const orphans: Array<string> = []
        for (let i = 0; i < 3; i++) orphans.push(yield* append("takeover", { n: String(i) }, { nudge: false }))
        yield* streams.readGroup({ streams: [stream], group: "engine", consumer: "ghost", count: 3 })
        const ghostBeat = yield* valkey.key("pollerHeartbeat", { kind: "sfc", group: "engine", consumer: "ghost" })
        const lapsesAt = Date.now() + 1500
        yield* unsafeCommand(valkey, "set heartbeat", (c) => c.set(ghostBeat, "0", "PX", 1500))

        // Every delivery of the dead one's entries, by whichever live consumer took it over.
        const seen = yield* Queue.unbounded<{ readonly entry: PollerEntry; readonly by: string; readonly at: number }>()
        const record = (by: string) => (entry: PollerEntry) => Queue.offer(seen, { entry, by, at: Date.now() }).pipe(Effect.asVoid)

        // A live consumer whose handler takes far longer than the heartbeat lifetime.
        const release = yield* Deferred.make<void>()
        const slowStarted = yield* Deferred.make<void>()
        const slowRuns = yield* Ref.make(0)
        const slowEntry = yield* append("takeover", { slow: "yes" }, { nudge: false })
        const slow = yield* start({
          ...base,
          ...NEVER_IDLE,
          consumer: "slow",
          handler: (entry: PollerEntry) =>
            entry.fields["slow"]
              ? Ref.update(slowRuns, (n) => n + 1).pipe(Effect.andThen(Deferred.succeed(slowStarted, undefined)), Effect.andThen(Deferred.await(release)))
              : record("slow")(entry)
        })
        yield* Deferred.await(slowStarted).pipe(Effect.timeout("10 seconds"))

        // The heir sees both consumers; it (or the slow one, just as entitled) may take only the dead one's entries.
        const heir = yield* start({ ...base, ...NEVER_IDLE, consumer: "heir", handler: record("heir") })
        const taken: Array<{ readonly entry: PollerEntry; readonly by: string; readonly at: number }> = []
        while (taken.length < 3) taken.push(yield* Queue.take(seen).pipe(Effect.timeout(`${TAKEOVER_WITHIN_MS + 10_000} millis`)))
        expect(taken.map((t) => t.entry.id).sort()).toEqual(orphans)
        for (const { entry, at } of taken) {
          expect(entry.deliveries).toBe(2)
          // Not while the heartbeat lived (a little slack for the two clocks), and soon after it lapsed.
          expect(at).toBeGreaterThanOrEqual(lapsesAt - 100)
          expect(at - lapsesAt).toBeLessThan(TAKEOVER_WITHIN_MS)
        }
        yield* until(
          streams.pendingEntries(stream, "engine"),
          (rows) => rows.length === 1,
          "5 seconds"
        )

        // A few more takeover checks pass: the slow consumer keeps its entry, handled once.
        yield* Effect.sleep("2500 millis")
        expect(yield* streams.pendingEntries(stream, "engine")).toMatchObject([{ id: slowEntry, consumer: "slow", deliveries: 1 }])
        expect(yield* Ref.get(slowRuns)).toBe(1)
        const claims = (yield* heir.poller.stats).claimed + (yield* slow.poller.stats).claimed
        expect(claims).toBe(3)
        expect(yield* Queue.size(seen)).toBe(0)

        yield* Deferred.succeed(release, undefined)
        yield* until(streams.pending(stream, "engine"), (p) => p.count === 0)
        expect(yield* Ref.get(slowRuns)).toBe(1)
      }).pipe(Effect.scoped, Effect.provide(freshLayer())),
    60_000
  )

  it.live("a consumer that shuts down removes its heartbeat, so what it left pending moves at once", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const started = yield* Deferred.make<void>()
      const leaving = yield* start({
        ...base,
        ...NEVER_IDLE,
        consumer: "leaving",
        shutdownGraceMs: 20,
        handler: () => Deferred.succeed(started, undefined).pipe(Effect.andThen(Effect.never))
      })
      const beat = yield* valkey.key("pollerHeartbeat", { kind: "sfc", group: "engine", consumer: "leaving" })
      yield* append("handover", { job: "j" })
      yield* Deferred.await(started).pipe(Effect.timeout("10 seconds"))
      expect(yield* unsafeCommand(valkey, "pttl", (c) => c.pttl(beat))).toBeGreaterThan(0)
      yield* leaving.stop
      expect(yield* unsafeCommand(valkey, "exists", (c) => c.exists(beat))).toBe(0)
      const seen = yield* Queue.unbounded<PollerEntry>()
      yield* start({ ...base, ...NEVER_IDLE, consumer: "next", handler: (e: PollerEntry) => Queue.offer(seen, e).pipe(Effect.asVoid) })
      const t0 = Date.now()
      expect(yield* Queue.take(seen).pipe(Effect.timeout("10 seconds"))).toMatchObject({ fields: { job: "j" }, deliveries: 2 })
      expect(Date.now() - t0).toBeLessThan(TAKEOVER_WITHIN_MS)
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("rejects a heartbeat lifetime below two renewal intervals before writing anything", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const error = yield* Effect.flip(start({ ...base, heartbeatIntervalMs: 1000, heartbeatTtlMs: 1500, handler: () => Effect.void }))
      expect(error).toMatchObject({ _tag: "InvalidInput", field: "heartbeatTtlMs" })
      const zero = yield* Effect.flip(start({ ...base, heartbeatIntervalMs: 0, handler: () => Effect.void }))
      expect(zero).toMatchObject({ _tag: "InvalidInput", field: "heartbeatIntervalMs" })
      const beat = yield* valkey.key("pollerHeartbeat", { kind: "sfc", group: "engine", consumer: "c1" })
      expect(yield* unsafeCommand(valkey, "exists", (c) => c.exists(beat))).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )
})
