import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Stream } from "effect"
import { type IncomingMessage, makeCloudEvent, makeMqttConnection } from "@microdcs/cloudevents-mqtt"
import { randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { statusLog } from "./StatusLog.js"

/**
 * The broker's Maximum Packet Size (its CONNACK): a message over it is refused here, before it is
 * sent, since the broker would answer it with DISCONNECT 0x95 and a resend after the reconnect
 * would drop the connection again.
 */

const LIMIT = 2048

const ownBroker = (maxPacketSize: number | undefined, port?: number) =>
  Effect.acquireRelease(
    Effect.promise(() => startMosquitto({ ...(maxPacketSize !== undefined ? { maxPacketSize } : {}), ...(port !== undefined ? { port } : {}) })),
    (server) => Effect.promise(() => server.stop())
  )

const connectTo = (url: string) =>
  makeMqttConnection({ url, clientIdBase: "maxpacket", reconnectMinMs: 100, connectTimeoutMs: 5000, publishTimeoutMs: 3000 })


const types = (stream: Stream.Stream<IncomingMessage>, n: number) =>
  stream.pipe(
    Stream.take(n),
    Stream.map((m) => (Result.isSuccess(m.decoded) ? m.decoded.success.type : "undecodable")),
    Stream.runCollect,
    Effect.timeout("10 seconds")
  )

const event = (type: string, text = "") => makeCloudEvent({ source: "urn:island", type, data: { text } })

describe("the broker's Maximum Packet Size", () => {
  it.live("a message over it fails with MessageTooLarge and is not sent; the connection stays up and smaller ones keep flowing", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const broker = yield* ownBroker(LIMIT)
      const island = yield* connectTo(broker.url)
      const mes = yield* connectTo(broker.url)
      const seen = yield* statusLog(island.statusChanges)
      const received = yield* mes.subscribe(`${prefix}/#`)
      const big = yield* Effect.result(island.publish(`${prefix}/state`, event("big.v1", "x".repeat(4096)), { retain: true }))
      expect(Result.isFailure(big) && big.failure).toMatchObject({ _tag: "MessageTooLarge", topic: `${prefix}/state`, limit: LIMIT })
      expect(Result.isFailure(big) && big.failure._tag === "MessageTooLarge" && big.failure.bytes).toBeGreaterThan(4096)
      for (let i = 0; i < 3; i++) yield* island.publish(`${prefix}/events`, event(`small-${i}.v1`))
      // In a batch, only the oversized message fails.
      const outcomes = yield* island.publishAll([
        { _tag: "Publish", topic: `${prefix}/events`, event: event("big.v1", "x".repeat(4096)) },
        { _tag: "Publish", topic: `${prefix}/events`, event: event("small-3.v1") }
      ])
      expect(outcomes.map((o) => o?._tag)).toEqual(["MessageTooLarge", undefined])
      expect([...(yield* types(received, 4))]).toEqual(["small-0.v1", "small-1.v1", "small-2.v1", "small-3.v1"])
      expect(yield* island.status).toBe("connected")
      expect(seen).not.toContain("reconnecting")
    }).pipe(Effect.scoped), 30_000
  )

  it.live("the size counted is the packet's own: one of exactly the limit is sent, one byte more is refused", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const broker = yield* ownBroker(LIMIT)
      const island = yield* connectTo(broker.url)
      const received = yield* island.subscribe(`${prefix}/raw`)
      const topic = `${prefix}/raw`
      // QoS 1 without properties: header 1 + remaining length 2 + topic 2+T + packet id 2 + properties length 1.
      const payload = LIMIT - (1 + 2 + 2 + Buffer.byteLength(topic) + 2 + 1)
      yield* island.publishRaw(topic, Buffer.alloc(payload, 0x20))
      const over = yield* Effect.result(island.publishRaw(topic, Buffer.alloc(payload + 1, 0x20)))
      expect(Result.isFailure(over) && over.failure).toMatchObject({ _tag: "MessageTooLarge", bytes: LIMIT + 1, limit: LIMIT })
      const [arrived] = yield* received.pipe(Stream.take(1), Stream.runCollect, Effect.timeout("10 seconds"))
      expect(arrived?.payload.length).toBe(payload)
    }).pipe(Effect.scoped), 30_000
  )

  it.live("the limit is read again at each connect: a broker restarted with a larger limit takes the larger message", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const first = yield* Effect.promise(() => startMosquitto({ maxPacketSize: LIMIT }))
      const island = yield* connectTo(first.url)
      const sessions: Array<number> = []
      yield* island.sessions.pipe(
        Stream.runForEach((s) => Effect.sync(() => sessions.push(s.connection))),
        Effect.forkScoped
      )
      const tooLarge = yield* Effect.result(island.publish(`${prefix}/x`, event("big.v1", "x".repeat(3000))))
      expect(Result.isFailure(tooLarge) && tooLarge.failure._tag).toBe("MessageTooLarge")
      const port = Number(new URL(first.url).port)
      yield* Effect.promise(() => first.stop())
      yield* ownBroker(4 * LIMIT, port)
      yield* Effect.gen(function* () {
        while (!sessions.includes(2)) yield* Effect.sleep("50 millis")
      }).pipe(Effect.timeout("10 seconds"))
      yield* island.publish(`${prefix}/x`, event("big.v1", "x".repeat(3000)))
    }).pipe(Effect.scoped), 30_000
  )
})
