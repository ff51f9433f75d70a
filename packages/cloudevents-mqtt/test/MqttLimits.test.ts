import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Stream } from "effect"
import { connect as connectRaw } from "mqtt"
import { randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import { brokerPacketLimitOf, type IncomingMessage, makeCloudEvent, makeErrorReply, makeMqttConnection, type MqttOptions } from "@microdcs/cloudevents-mqtt"
import { statusLog } from "./StatusLog.js"

/** What the broker refuses or must not send us: strings, topics, oversized packets, floods. */

const broker = mosquittoForFile()

const connect = (options: Partial<MqttOptions> = {}) =>
  makeMqttConnection({ url: broker.url, clientIdBase: "limits", reconnectMinMs: 100, connectTimeoutMs: 5000, ...options })

const take = (stream: Stream.Stream<IncomingMessage>, n: number) =>
  stream.pipe(Stream.take(n), Stream.runCollect, Effect.timeout("10 seconds"))


const request = (prefix: string, id = "req-1") => ({
  contentType: "application/json",
  responseTopic: `${prefix}/replies/mes`,
  userProperties: { specversion: "1.0", id, source: "urn:mes", type: "t", subject: "line-1" }
})

/**
 * A sender on a plain mqtt.js client that publishes one QoS 1 message of `bytes` and resolves
 * with the reason code of the DISCONNECT the broker answers it with (no reconnect).
 */
const sendOversize = (url: string, topic: string, bytes: number) =>
  new Promise<number | undefined>((resolve, reject) => {
    const client = connectRaw(url, { protocolVersion: 5, reconnectPeriod: 0, connectTimeout: 5000 })
    const timer = setTimeout(() => {
      client.end(true)
      reject(new Error("no DISCONNECT within 5 s"))
    }, 5000)
    client.on("error", () => undefined)
    client.once("connect", () => client.publish(topic, Buffer.alloc(bytes, 0x20), { qos: 1 }, () => undefined))
    client.once("disconnect", (packet) => {
      clearTimeout(timer)
      client.end(true)
      resolve(packet.reasonCode)
    })
  })

describe("MqttConnection limits", () => {
  it.live("an error reply quoting a control character (an id 'jo-\\tx') is sent escaped, and the connection stays up", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const island = yield* connect()
      const mes = yield* connect()
      const seen = yield* statusLog(island.statusChanges)
      const requests = yield* island.subscribe(`${prefix}/commands`)
      const replies = yield* mes.subscribe(`${prefix}/replies/mes`)
      yield* mes.publishRaw(`${prefix}/commands`, Buffer.from('{"JobOrderID":"jo-\\tx"}'), { properties: request(prefix) })
      const [incoming] = yield* take(requests, 1)
      const id = (Result.getOrThrow(incoming!.decoded).data as { JobOrderID: string }).JobOrderID
      expect(id).toBe("jo-\tx")
      yield* island.reply(incoming!, makeErrorReply({ source: "urn:island", type: "error.v1", kind: "UnknownJobOrder", message: `job order ${id} not found` }))
      yield* incoming!.ack
      const [reply] = yield* take(replies, 1)
      expect(reply?.properties.userProperties?.["mdcserrormessage"]).toBe("job order jo-\\u0009x not found")
      // One more round trip on the same connection: mosquitto did not drop it.
      yield* island.publish(`${prefix}/replies/mes`, makeCloudEvent({ source: "urn:island", type: "after.v1" }))
      const [after] = yield* take(replies, 1)
      expect(Result.getOrThrow(after!.decoded).type).toBe("after.v1")
      expect(yield* island.status).toBe("connected")
      expect(seen).not.toContain("reconnecting")
    }).pipe(Effect.scoped)
  )

  it.live("an event with a control character in an attribute is refused before it is sent", () =>
    Effect.gen(function* () {
      const island = yield* connect()
      const result = yield* Effect.result(island.publish(`${randomPrefix()}/x`, makeCloudEvent({ source: "urn:island", type: "t", extensions: { jobid: "jo-\tx" } })))
      expect(Result.isFailure(result) && result.failure._tag).toBe("EncodeError")
      const topic = yield* Effect.result(island.publishRaw(`${randomPrefix()}/a\tb`, Buffer.from("x")))
      expect(Result.isFailure(topic) && topic.failure._tag).toBe("InvalidTopic")
      const property = yield* Effect.result(island.publishRaw(`${randomPrefix()}/x`, Buffer.from("x"), { properties: { userProperties: { id: "jo-\tx" } } }))
      expect(Result.isFailure(property) && property.failure).toMatchObject({ _tag: "MqttPublishError", reason: "rejected" })
      expect(yield* island.status).toBe("connected")
    }).pipe(Effect.scoped)
  )

  it.live("a reply to a broker topic ($SYS/x) is refused before sending; a publish there fails with the broker's reason code", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const island = yield* connect()
      const mes = yield* connect()
      const requests = yield* island.subscribe(`${prefix}/commands`)
      yield* mes.publishRaw(`${prefix}/commands`, Buffer.alloc(0), { properties: { ...request(prefix), responseTopic: "$SYS/x" } })
      const [incoming] = yield* take(requests, 1)
      const replied = yield* Effect.result(island.reply(incoming!, makeCloudEvent({ source: "urn:island", type: "reply.v1" })))
      expect(Result.isFailure(replied) && replied.failure).toMatchObject({ _tag: "InvalidTopic", part: "responseTopic" })
      // The broker's own answer: PUBACK 135 (not authorized), a refusal, not a timeout.
      const refused = yield* Effect.result(island.publish("$SYS/x", makeCloudEvent({ source: "urn:island", type: "t" })))
      expect(Result.isFailure(refused) && refused.failure).toMatchObject({ _tag: "MqttPublishError", reason: "rejected", reasonCode: 135 })
      expect(yield* island.status).toBe("connected")
    }).pipe(Effect.scoped)
  )

  it.live("the broker drops a message over maxPacketBytes without sending it; smaller ones still arrive", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const island = yield* connect({ maxPayloadBytes: 1024, maxPacketBytes: 4096 })
      const mes = yield* connect()
      const seen = yield* statusLog(island.statusChanges)
      const requests = yield* island.subscribe(`${prefix}/commands`)
      yield* mes.publishRaw(`${prefix}/commands`, Buffer.alloc(64 * 1024, 0x20), { properties: request(prefix, "huge") })
      // Over the payload limit but within the packet limit: it arrives and is refused as too-large.
      yield* mes.publishRaw(`${prefix}/commands`, Buffer.alloc(2048, 0x20), { properties: request(prefix, "over") })
      yield* mes.publishRaw(`${prefix}/commands`, Buffer.from("1"), { properties: request(prefix, "small") })
      const received = yield* take(requests, 2)
      expect(received.map((m) => m.properties.userProperties?.["id"])).toEqual(["over", "small"])
      expect(Result.isFailure(received[0]!.decoded) && received[0]!.decoded.failure.kind).toBe("too-large")
      expect(Result.isSuccess(received[1]!.decoded)).toBe(true)
      for (const message of received) yield* message.ack
      expect(seen).not.toContain("reconnecting")
    }).pipe(Effect.scoped)
  )

  it.live("messages over maxPacketBytes, more than receiveMaximum of them, stall the broker's delivery; the intake watch notices, reconnects, and the small ones after them arrive", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      // A persistent session: what the broker queued for the island while it stalled survives the reconnect.
      const island = yield* connect({
        clientId: `limits-${prefix.replaceAll(/[^A-Za-z0-9]/g, "")}`,
        clean: false,
        sessionExpirySeconds: 60,
        maxPayloadBytes: 1024,
        maxPacketBytes: 4096,
        receiveMaximum: 4,
        intakeProbeTopic: `${prefix}/probe`,
        intakeProbeMs: 300
      })
      const mes = yield* connect()
      const requests = yield* island.subscribe(`${prefix}/commands`, { keepInSession: true })
      // mosquitto drops each for the island unsent and keeps its in-flight slot: after 4 it sends nothing more.
      for (let i = 0; i < 10; i++) yield* mes.publishRaw(`${prefix}/commands`, Buffer.alloc(8 * 1024, 0x20), { properties: request(prefix, `huge-${i}`) })
      for (let i = 0; i < 3; i++) yield* mes.publishRaw(`${prefix}/commands`, Buffer.from("1"), { properties: request(prefix, `small-${i}`) })
      const received: Array<unknown> = []
      yield* requests.pipe(
        Stream.tap((m) => Effect.andThen(m.ack, Effect.sync(() => received.push(m.properties.userProperties?.["id"])))),
        Stream.take(3),
        Stream.runDrain,
        Effect.timeout("20 seconds"),
        Effect.catchTag("TimeoutError", () => Effect.fail(new Error(`received ${JSON.stringify(received)}, not the 3 small ones`)))
      )
      expect(received).toEqual(["small-0", "small-1", "small-2"])
      const intake = yield* island.intake
      expect(intake.reconnects).toBeGreaterThanOrEqual(1)
      // The probe's own subscription is not one of the connection's subscriptions.
      expect(yield* island.subscriptions).toEqual([`${prefix}/commands`])
    }).pipe(Effect.scoped), 30_000
  )

  it.live("a broker whose max_packet_size matches the island's limits turns a larger message away at its sender (DISCONNECT 0x95); the island's intake never stalls", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const limits = { maxPayloadBytes: 1024, maxPacketBytes: 4096 }
      const own = yield* Effect.acquireRelease(
        Effect.promise(() => startMosquitto({ maxPacketSize: brokerPacketLimitOf(limits) })),
        (server) => Effect.promise(() => server.stop())
      )
      const island = yield* makeMqttConnection({ url: own.url, clientIdBase: "limits", connectTimeoutMs: 5000, receiveMaximum: 4, ...limits })
      const requests = yield* island.subscribe(`${prefix}/commands`)
      // More than receiveMaximum of them: none reaches the island, none costs it a slot.
      for (let i = 0; i < 6; i++) {
        expect(yield* Effect.promise(() => sendOversize(own.url, `${prefix}/commands`, 8 * 1024))).toBe(0x95)
      }
      const mes = yield* makeMqttConnection({ url: own.url, clientIdBase: "limits", connectTimeoutMs: 5000 })
      yield* mes.publishRaw(`${prefix}/commands`, Buffer.from("1"), { properties: request(prefix, "small") })
      const [small] = yield* take(requests, 1)
      expect(small?.properties.userProperties?.["id"]).toBe("small")
    }).pipe(Effect.scoped)
  )

  it.live("an idle connection with an intake answers its probes: never stalled, never reconnected", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const island = yield* connect({ intakeProbeTopic: `${prefix}/probe`, intakeProbeMs: 100 })
      const seen = yield* statusLog(island.statusChanges)
      yield* island.subscribe(`${prefix}/commands`)
      yield* Effect.sleep("1500 millis")
      expect(yield* island.intake).toEqual({ stalled: false, reconnects: 0 })
      expect(seen).not.toContain("reconnecting")
    }).pipe(Effect.scoped)
  )

  it.live("QoS 0 messages beyond receiveMaximum waiting in a stream are dropped; QoS 1 ones never are", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const island = yield* connect({ receiveMaximum: 5 })
      const mes = yield* connect()
      const requests = yield* island.subscribe(`${prefix}/commands`)
      const sentinels = yield* island.subscribe(`${prefix}/sentinel`)
      for (let i = 0; i < 50; i++) yield* mes.publishRaw(`${prefix}/commands`, Buffer.from(String(i)), { qos: 0, properties: request(prefix, `q0-${i}`) })
      // The broker passes one publisher's messages on in order: once the sentinel is here, the
      // island has seen every QoS 0 message, while nobody read the commands stream.
      yield* mes.publishRaw(`${prefix}/sentinel`, Buffer.from("1"), { qos: 1, properties: request(prefix, "sentinel") })
      yield* take(sentinels, 1)
      yield* mes.publishRaw(`${prefix}/commands`, Buffer.from("1"), { qos: 1, properties: request(prefix, "last") })
      const ids: Array<unknown> = []
      yield* requests.pipe(
        Stream.tap((m) => Effect.sync(() => ids.push(m.properties.userProperties?.["id"]))),
        Stream.takeUntil((m) => m.properties.userProperties?.["id"] === "last"),
        Stream.runDrain,
        Effect.timeout("10 seconds")
      )
      expect(ids.at(-1)).toBe("last")
      expect(ids.length - 1).toBeGreaterThanOrEqual(1)
      expect(ids.length - 1).toBeLessThanOrEqual(5)
    }).pipe(Effect.scoped)
  )
})
