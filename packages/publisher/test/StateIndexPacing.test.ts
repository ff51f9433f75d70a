import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Stream } from "effect"
import { makeMqttConnection } from "@microdcs/cloudevents-mqtt"
import { mosquittoForFile } from "@microdcs/testkit"
import type { StateIndex } from "@microdcs/publisher"
import { admit, caughtUp, freshIsland, jobOrder, retainedStateIndex, retainedUnder, startPublisher, store, until } from "./Kit.js"

const broker = mosquittoForFile()

/**
 * Every state index carries the whole scope, so it is paced: at most one per
 * `stateIndexIntervalMs`, while each batch's order topics go out at once. The last change is in
 * an index within about one interval, by the publisher's own timer (the fallback round is an
 * hour away here).
 */
describe("Publisher state index pacing", () => {
  it.live("many batches in a second give a few indexes, and the last one lists every job within an interval", () => {
    const { valkeyPrefix, base, options } = freshIsland()
    const s = "line-paced"
    const intervalMs = 700
    return Effect.gen(function* () {
      const { publisher } = yield* startPublisher(broker.url, valkeyPrefix, { ...options, stateIndexIntervalMs: intervalMs, fallbackIntervalMs: 3_600_000 })
      yield* until(publisher.isActive, (active) => active)
      const indexes: Array<StateIndex> = []
      const watcher = yield* makeMqttConnection({ url: broker.url, clientIdBase: "index-watcher", connectTimeoutMs: 5000 })
      const live = yield* watcher.subscribe(`${base}/${s}/state-index`)
      yield* Effect.forkScoped(
        Stream.runForEach(live, (m) =>
          Effect.andThen(m.ack, Effect.sync(() => (Result.isSuccess(m.decoded) ? indexes.push(m.decoded.success.data as StateIndex) : undefined)))
        )
      )

      const started = Date.now()
      for (let n = 0; n < 30; n++) {
        yield* admit(s, jobOrder(`jo-${String(n).padStart(2, "0")}`, 1))
        // Each write its own batch: the publisher is nudged and catches up before the next.
        yield* caughtUp(s)
      }
      const lastWrite = Date.now()
      const listed = yield* until(
        Effect.map(retainedUnder(broker.url, base), (retained) => retainedStateIndex(retained, base, s).head.total_jobs),
        (total) => total === 30
      )
      expect(listed).toBe(30)
      const settled = Date.now()
      // Within the interval and a margin for a loaded machine, not at the next fallback round.
      expect(settled - lastWrite).toBeLessThan(intervalMs + 2000)
      // One index per interval at most, and the first at once: far fewer than the 30 batches.
      expect(indexes.length).toBeLessThanOrEqual(Math.ceil((settled - started) / intervalMs) + 2)
      expect(indexes.length).toBeLessThan(30)
      expect(indexes.at(-1)?.total_jobs).toBe(30)
    }).pipe(Effect.scoped, Effect.provide(store(valkeyPrefix)))
  }, 60_000)
})
