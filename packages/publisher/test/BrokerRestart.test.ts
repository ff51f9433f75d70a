import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { admit, caughtUp, jobOrder, retainedStateIndex, retainedUnder, startPublisher, store, until } from "./Kit.js"

/** The order and state index topics retained (the metadata is checked on its own). */
const jobTopics = (retained: ReadonlyMap<string, unknown>) => [...retained.keys()].filter((topic) => !topic.endsWith("/metadata")).sort()

/** A clean session (the default), and the persistent session the daemon uses (which a restarted broker has lost too). */
const sessions = [
  ["a clean session", {}],
  ["a persistent session", { clean: false, sessionExpirySeconds: 600, clientId: randomPrefix("publisher") }]
] as const

describe("Publisher and a broker restart", () => {
  for (const [session, mqtt] of sessions) {
    it.live(`a broker restarted without persistence gets every retained topic back, without a republish command (${session})`, () => {
      const topicPrefix = randomPrefix("mqtt")
      const valkeyPrefix = randomPrefix("pub")
      const base = `${topicPrefix}/island-1`
      return Effect.gen(function* () {
        // A broker of this test's own, so that it can be killed and started again on its port.
        let broker = yield* Effect.promise(() => startMosquitto())
        yield* Effect.addFinalizer(() => Effect.promise(() => broker.stop()))
        const port = broker.port
        const { publisher } = yield* startPublisher(broker.url, valkeyPrefix, {
          prefix: topicPrefix,
          discriminator: "island-1",
          fallbackIntervalMs: 100,
          leaseTtlMs: 3000
        }, mqtt)
        yield* until(publisher.isActive, (active) => active)
        yield* admit("line-1", jobOrder("jo-1", 2), "StoreAndStart")
        yield* admit("line-2", jobOrder("jo-2", 1))
        yield* caughtUp("line-1")
        yield* caughtUp("line-2")
        const before = yield* retainedUnder(broker.url, base)
        expect(jobTopics(before)).toHaveLength(4)
        const seq = retainedStateIndex(before, base, "line-1").head.seq

        // The broker dies and comes back on the same port with nothing retained (persistence false).
        yield* Effect.promise(() => broker.stop())
        broker = yield* Effect.promise(() => startMosquitto({ port }))

        // Nothing is written and nobody resets a cursor: the new broker session alone brings them back.
        const after = yield* until(retainedUnder(broker.url, base), (r) => jobTopics(r).length === 4)
        expect(jobTopics(after)).toEqual(jobTopics(before))
        // The island's metadata comes back too (it may follow the scopes by a moment).
        yield* until(retainedUnder(broker.url, base), (r) => r.has(`${base}/metadata`))
        expect(after.get(`${base}/line-1/order/jo-1`)!.event.data).toEqual(before.get(`${base}/line-1/order/jo-1`)!.event.data)
        const index = retainedStateIndex(after, base, "line-1")
        expect(index.head.seq).toBeGreaterThan(seq)
        expect(index.jobs).toEqual([{ job_order_id: "jo-1", state: "AllowedToStart_Ready", has_result: false }])
        expect(yield* publisher.isActive).toBe(true)
      }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
    })
  }
})
