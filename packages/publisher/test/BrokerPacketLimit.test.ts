import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { admit, caughtUp, jobOrder, retainedStateIndex, retainedUnder, startPublisher, store, until } from "./Kit.js"

describe("Publisher and the broker's Maximum Packet Size", () => {
  it.live("a job order too large for the broker is logged, counted and skipped; the other jobs and the state index are published", () => {
    const topicPrefix = randomPrefix("mqtt")
    const valkeyPrefix = randomPrefix("pub")
    const base = `${topicPrefix}/island-1`
    return Effect.gen(function* () {
      const broker = yield* Effect.acquireRelease(
        Effect.promise(() => startMosquitto({ maxPacketSize: 8192 })),
        (server) => Effect.promise(() => server.stop())
      )
      const { publisher } = yield* startPublisher(broker.url, valkeyPrefix, {
        prefix: topicPrefix,
        discriminator: "island-1",
        fallbackIntervalMs: 100,
        leaseTtlMs: 3000,
        stateIndexIntervalMs: 0
      })
      yield* until(publisher.isActive, (active) => active)
      yield* admit("line-1", jobOrder("jo-big", 2, { Description: [{ Text: "x".repeat(16 * 1024) }] }))
      yield* admit("line-1", jobOrder("jo-small", 1))
      // Not stalled by the refused message: the cursor reaches the newest change.
      yield* caughtUp("line-1")
      const retained = yield* retainedUnder(broker.url, base)
      expect(retained.has(`${base}/line-1/order/jo-small`)).toBe(true)
      expect(retained.has(`${base}/line-1/order/jo-big`)).toBe(false)
      expect(retainedStateIndex(retained, base, "line-1").jobs.map((j) => j.job_order_id).sort()).toEqual(["jo-big", "jo-small"])
      const stats = yield* publisher.stats
      expect(stats.tooLarge).toBeGreaterThanOrEqual(1)
      expect(stats.active).toBe(true)
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  }, 30_000)
})
