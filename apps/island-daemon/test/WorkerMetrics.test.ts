import { describe, expect, it } from "@effect/vitest"
import { Context, Data, Effect, Layer } from "effect"
import { MqttConnection } from "@microdcs/cloudevents-mqtt"
import { makePoller } from "@microdcs/poller"
import { Publisher, PublisherLive } from "@microdcs/publisher"
import { ConsumerHeartbeats, Valkey, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix, startInstance, startScoped, until } from "@microdcs/test-utils"
import { mosquittoForFile, putJobOrder, testStore } from "@microdcs/testkit"
import { makeMetrics } from "../src/Metrics.js"

// Issue 21, item 17: the pollers', the publisher's and XAUTOCLAIM's counters were Effect metrics
// that never reached `/metrics`. Real work here (a poller over the run's Valkey that handles,
// fails, dead-letters and finds a deleted pending entry; a publisher over MQTT) and then the
// daemon's exposition text names every series with its count.

const broker = mosquittoForFile()

/** The value of one exposition line, or undefined when the series is absent. */
const sample = (text: string, series: string): number | undefined => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

class Refused extends Data.TaggedError("Refused")<{ readonly message: string }> {}

const SCOPE = "line-1"
const POLLER = { kind: "metrics-test", stream: "sfcWork", group: "metrics-group" } as const

/** Appends an entry to the scope's work stream (registering the scope, as a writer does). */
const append = (fields: Record<string, string>) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const stream = yield* valkey.key("sfcWork", { scope: SCOPE })
    const scopes = yield* valkey.key("scopes", {})
    yield* unsafeCommand(valkey, "append", (c) => c.multi().xadd(stream, "*", ...Object.entries(fields).flat()).sadd(scopes, SCOPE).exec())
    return stream
  })

/**
 * An entry a consumer read and never acknowledged, deleted before anyone did: XAUTOCLAIM reports its
 * id as deleted. The consumer keeps a heartbeat, so the poller waits for the entry's idle time
 * (XAUTOCLAIM) instead of taking over a dead consumer's entries at once (XCLAIM, which drops a
 * deleted id without reporting it).
 */
const deletedPending = Effect.gen(function* () {
  const streams = yield* ValkeyStreams
  yield* (yield* (yield* ConsumerHeartbeats).of({ kind: POLLER.kind, group: POLLER.group, consumer: "gone" }, 60_000)).beat
  const stream = yield* append({ n: "lost" })
  yield* streams.ensureGroup(stream, POLLER.group)
  const [batch] = yield* streams.readGroup({ streams: [stream], group: POLLER.group, consumer: "gone", count: 1 })
  yield* Effect.flatMap(Valkey, (valkey) => unsafeCommand(valkey, "xdel", (c) => c.xdel(stream, batch!.entries[0]!.id)))
})

/** A poller that handles `ok` entries, refuses `bad` ones (dead-lettered at once) and claims orphans quickly. */
const runPoller = Effect.gen(function* () {
  yield* deletedPending
  yield* append({ n: "ok-1" })
  yield* append({ n: "ok-2" })
  yield* append({ n: "bad" })
  const { value: poller } = yield* startScoped(
    makePoller({
      ...POLLER,
      consumer: "c1",
      maxDeliveries: 1,
      claimIdleMs: 50,
      claimIntervalMs: 50,
      handler: (entry) => (entry.fields["n"] === "bad" ? Effect.fail(new Refused({ message: "refused" })) : Effect.void)
    })
  )
  yield* until(poller.stats, (s) => s.processed === 2 && s.deadLettered === 1 && s.claimDeleted === 1, { within: "10 seconds", every: "20 millis", what: "the poller's work" })
})

/** A publisher over the broker that publishes one stored job order. */
const runPublisher = (prefix: string) =>
  Effect.gen(function* () {
    const topicPrefix = randomPrefix("mqtt")
    const { context } = yield* startInstance(
      PublisherLive({ instanceId: "pub-metrics", prefix: topicPrefix, discriminator: "island-1", fallbackIntervalMs: 100, leaseTtlMs: 3000 }).pipe(
        Layer.provide(MqttConnection.layer({ url: broker.url, clientIdBase: "publisher", connectTimeoutMs: 5000, reconnectMinMs: 100 })),
        Layer.provide(testStore({ prefix }))
      )
    )
    yield* putJobOrder(SCOPE, { JobOrderID: "jo-metrics", Priority: 1, WorkMasterID: [{ ID: "wm-1" }] })
    yield* until(Context.get(context, Publisher).stats, (s) => s.published > 0 && s.batches > 0, { within: "10 seconds", every: "20 millis" })
  })

describe("/metrics of the stream workers", () => {
  it.live(
    "shows the poller's, the publisher's and XAUTOCLAIM's counters, each with its labels",
    () => {
      const prefix = randomPrefix("wm")
      return Effect.gen(function* () {
        const metrics = makeMetrics()
        yield* runPoller
        yield* runPublisher(prefix)
        const text = yield* Effect.promise(() => metrics.scrape())

        const poller = (what: string) => sample(text, `microdcs_poller_${what}_total{kind="${POLLER.kind}",group="${POLLER.group}"}`)
        expect({
          read: poller("read"),
          processed: poller("processed"),
          failed: poller("failed"),
          deadLettered: poller("dead_lettered"),
          claimDeleted: poller("claim_deleted")
        }).toEqual({ read: 3, processed: 2, failed: 1, deadLettered: 1, claimDeleted: 1 })
        expect(sample(text, `microdcs_stream_autoclaim_deleted_total{group="${POLLER.group}"}`)).toBe(1)

        const publisher = (what: string) => sample(text, `microdcs_publisher_${what}_total{instance="pub-metrics"}`)
        expect(publisher("published")).toBeGreaterThan(0)
        expect(publisher("batches")).toBeGreaterThan(0)
        expect(publisher("activations")).toBe(1)
        expect(sample(text, `microdcs_publisher_active{instance="pub-metrics"}`)).toBe(1)
      }).pipe(Effect.provide(testStore({ prefix })), Effect.scoped)
    },
    30_000
  )
})
