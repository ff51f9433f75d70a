import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Fiber, Stream } from "effect"
import { randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { makeCloudEvent, makeMqttConnection, type MqttStatus } from "@microdcs/cloudevents-mqtt"
import { reconnectDelay } from "@microdcs/cloudevents-mqtt/testing"

const waitFor = (changes: Stream.Stream<MqttStatus>, wanted: MqttStatus) =>
  changes.pipe(Stream.filter((s) => s === wanted), Stream.take(1), Stream.runDrain, Effect.timeout("10 seconds"))

describe("reconnect", () => {
  it("backs off exponentially with jitter, capped", () => {
    expect(reconnectDelay(0, 100, 1000, () => 1)).toBe(100)
    expect(reconnectDelay(3, 100, 1000, () => 1)).toBe(800)
    expect(reconnectDelay(20, 100, 1000, () => 1)).toBe(1000)
    expect(reconnectDelay(20, 100, 1000, () => 0)).toBe(500)
    expect(reconnectDelay(0, 100, 1000, () => 0)).toBe(100)
  })

  it.live("reconnects after the broker restarts on the same port, subscriptions included", () =>
    Effect.gen(function* () {
      // A broker of its own: this test stops it.
      const broker = yield* Effect.promise(() => startMosquitto())
      yield* Effect.addFinalizer(() => Effect.promise(() => broker.stop()))
      const conn = yield* makeMqttConnection({ url: broker.url, reconnectMinMs: 50, reconnectMaxMs: 200 })
      const topic = `${randomPrefix()}/events`
      const messages = yield* conn.subscribe(topic)
      expect(yield* conn.status).toBe("connected")

      yield* Effect.promise(() => broker.stop())
      yield* waitFor(conn.statusChanges, "reconnecting")
      const again = yield* Effect.promise(() => startMosquitto({ port: broker.port }))
      yield* Effect.addFinalizer(() => Effect.promise(() => again.stop()))
      yield* waitFor(conn.statusChanges, "connected")

      // The new broker knows nothing of us: mqtt.js subscribes again after the reconnect.
      const event = makeCloudEvent({ source: "urn:test", type: "t", data: { after: "restart" } })
      yield* conn.publish(topic, event)
      const [message] = yield* messages.pipe(Stream.take(1), Stream.runCollect, Effect.timeout("5 seconds"))
      expect(message && Result.getOrThrow(message.decoded)).toEqual(event)
      yield* message!.ack
    }).pipe(Effect.scoped)
  )

  it.live("a QoS 1 publish waiting for its PUBACK with the broker down fails with closed when the connection is released", () =>
    Effect.gen(function* () {
      const broker = yield* Effect.promise(() => startMosquitto())
      let running = true
      const stop = Effect.promise(() => (running ? ((running = false), broker.stop()) : Promise.resolve()))
      yield* Effect.addFinalizer(() => stop)
      const outcome = yield* Effect.scoped(
        Effect.gen(function* () {
          // A publish timeout far beyond the test's: only the release can end the publish.
          const conn = yield* makeMqttConnection({ url: broker.url, reconnectMinMs: 50, publishTimeoutMs: 600_000 })
          yield* stop
          yield* waitFor(conn.statusChanges, "reconnecting")
          const publishing = yield* Effect.forkDetach(Effect.flip(conn.publish("a/b", makeCloudEvent({ source: "s", type: "t" }))))
          // The publish runs up to its wait for the PUBACK in one go, before the scope closes.
          yield* Effect.repeat(Effect.yieldNow, { times: 3 })
          return publishing
        })
      )
      expect(yield* Fiber.join(outcome)).toMatchObject({ _tag: "MqttPublishError", reason: "closed", message: "connection closed before the PUBACK" })
    }).pipe(Effect.scoped)
  )

  it.live("with the broker down, ending a subscription and then the connection returns", () =>
    Effect.gen(function* () {
      const broker = yield* Effect.promise(() => startMosquitto())
      let running = true
      const stop = Effect.promise(() => (running ? ((running = false), broker.stop()) : Promise.resolve()))
      yield* Effect.addFinalizer(() => stop)
      const conn = yield* Effect.scoped(
        Effect.gen(function* () {
          const conn = yield* makeMqttConnection({ url: broker.url, reconnectMinMs: 50 })
          yield* Effect.scoped(
            Effect.gen(function* () {
              yield* conn.subscribe(`${randomPrefix()}/events`)
              yield* stop
              yield* waitFor(conn.statusChanges, "reconnecting")
            })
          )
          expect(yield* conn.subscriptions).toEqual([])
          return conn
        })
      )
      expect(yield* conn.status).toBe("closed")
    }).pipe(Effect.scoped)
  )

  it.live("reports closed once its scope ends", () =>
    Effect.gen(function* () {
      const broker = yield* Effect.promise(() => startMosquitto())
      yield* Effect.addFinalizer(() => Effect.promise(() => broker.stop()))
      const status = yield* Effect.scoped(
        Effect.gen(function* () {
          const conn = yield* makeMqttConnection({ url: broker.url })
          return { conn, before: yield* conn.status }
        })
      )
      expect(status.before).toBe("connected")
      expect(yield* status.conn.status).toBe("closed")
      expect(yield* Effect.flip(status.conn.publish("a/b", makeCloudEvent({ source: "s", type: "t" })))).toMatchObject({
        _tag: "MqttPublishError",
        reason: "closed"
      })
    }).pipe(Effect.scoped)
  )
})
