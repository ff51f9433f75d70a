import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Fiber, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { randomPrefix } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import {
  type CloudEvent,
  type IncomingMessage,
  makeCloudEvent,
  makeErrorReply,
  makeMqttConnection,
  type MqttOptions
} from "@microdcs/cloudevents-mqtt"

const broker = mosquittoForFile()

const connect = (options: Partial<MqttOptions> = {}) =>
  makeMqttConnection({ url: broker.url, clientIdBase: "test", reconnectMinMs: 100, connectTimeoutMs: 5000, ...options })

/** The next n messages, failing the test (instead of hanging) when they do not come. */
const take = (stream: Stream.Stream<IncomingMessage>, n: number) =>
  stream.pipe(Stream.take(n), Stream.runCollect, Effect.timeout("5 seconds"))

const event = (data: unknown, extra: Partial<Parameters<typeof makeCloudEvent>[0]> = {}) =>
  makeCloudEvent({ source: "urn:test", type: "org.opcfoundation.ISA95-JOBCONTROL_V2.Start.v2", subject: "line-1/jo-1", data, ...extra })

const eventOf = (message: IncomingMessage | undefined): CloudEvent => {
  if (!message) throw new Error("no message")
  return Result.getOrThrow(message.decoded)
}

describe("MqttConnection", () => {
  it.live("request and reply: correlation data echoed, causationid = request id, a new id, our source", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const responder = yield* connect({ clientIdBase: "island" })
      const requester = yield* connect({ clientIdBase: "mes" })
      const requests = yield* responder.subscribe(`${prefix}/+/commands`)
      const replyTopic = `${prefix}/replies/mes-1`
      const replies = yield* requester.subscribe(replyTopic)

      // The responder replies with QoS 1 *before* acknowledging the request: this only works
      // because a pending PUBACK does not stall the client's packet processing.
      const serve = yield* requests.pipe(
        Stream.take(1),
        Stream.runForEach((request) =>
          responder
            .reply(request, makeCloudEvent({ source: "urn:island", type: "org.opcfoundation.ISA95-JOBCONTROL_V2.Start.v2.reply", data: { status: 1 } }))
            .pipe(Effect.andThen(request.ack))
        ),
        Effect.forkChild
      )
      const correlationId = randomUUID()
      const request = event({ JobOrderID: "jo-1" })
      yield* requester.publish(`${prefix}/line-1/commands`, request, { responseTopic: replyTopic, correlationId })
      const [reply] = yield* take(replies, 1)
      yield* Fiber.join(serve)

      const replied = eventOf(reply)
      expect(reply?.correlationData).toEqual(Buffer.from(correlationId.replace(/-/g, ""), "hex"))
      expect(replied.extensions).toMatchObject({ correlationid: correlationId, causationid: request.id })
      expect(replied.id).not.toBe(request.id)
      expect(replied.source).toBe("urn:island")
      expect(replied.data).toEqual({ status: 1 })
      yield* reply!.ack
    }).pipe(Effect.scoped)
  )

  it.live("bad input arrives as a DecodeError and can be answered with an error reply", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const island = yield* connect()
      const mes = yield* connect()
      const requests = yield* island.subscribe(`${prefix}/commands`)
      const replies = yield* mes.subscribe(`${prefix}/replies/x`)
      const correlationData = Buffer.from("short")
      yield* mes.publishRaw(`${prefix}/commands`, Buffer.from("{oops"), {
        properties: {
          contentType: "application/json",
          correlationData,
          responseTopic: `${prefix}/replies/x`,
          userProperties: { specversion: "1.0", id: "req-1", source: "urn:mes", type: "t" }
        }
      })
      const [request] = yield* take(requests, 1)
      expect(Result.isFailure(request!.decoded) && request!.decoded.failure.kind).toBe("correlation")
      const error = Result.isFailure(request!.decoded) ? request!.decoded.failure : undefined
      yield* island.reply(request!, makeErrorReply({ source: "urn:island", type: "error.v1", kind: error!.kind, message: error!.message }))
      yield* request!.ack
      const [reply] = yield* take(replies, 1)
      // The reply echoes the requester's correlation data as it came (so here it does not decode as ours).
      expect(reply?.correlationData).toEqual(correlationData)
      expect(reply?.properties.userProperties).toMatchObject({ mdcserrorkind: "correlation", causationid: "req-1", source: "urn:island" })
    }).pipe(Effect.scoped)
  )

  it.live("a retained message with an expiry reaches a late subscriber with the remaining expiry", () =>
    Effect.gen(function* () {
      const topic = `${randomPrefix()}/line-1/order/jo-1`
      const publisher = yield* connect()
      const retained = event({ JobOrder: { ID: "jo-1" }, State: "Running" })
      yield* publisher.publish(topic, retained, { retain: true, messageExpirySeconds: 3600 })
      const late = yield* connect()
      const [message] = yield* take(yield* late.subscribe(topic), 1)
      expect(message?.retain).toBe(true)
      expect(message?.properties.messageExpiryInterval).toBeGreaterThan(3500)
      expect(message?.properties.messageExpiryInterval).toBeLessThanOrEqual(3600)
      expect(eventOf(message)).toEqual(retained)
    }).pipe(Effect.scoped)
  )

  it.live("a zero-byte retained publish deletes the retained message", () =>
    Effect.gen(function* () {
      const topic = `${randomPrefix()}/line-1/order/jo-2`
      const publisher = yield* connect()
      yield* publisher.publish(topic, event({ State: "Ended" }), { retain: true })
      yield* publisher.publishRaw(topic, Buffer.alloc(0), { retain: true })
      const late = yield* connect()
      const messages = yield* late.subscribe(topic)
      // A retained copy would arrive before anything published after the SUBACK.
      const marker = event({ marker: true })
      yield* publisher.publish(topic, marker)
      const [first] = yield* take(messages, 1)
      expect(first?.retain).toBe(false)
      expect(eventOf(first).id).toBe(marker.id)
    }).pipe(Effect.scoped)
  )

  it.live("a message not acknowledged is redelivered when the session resumes; acknowledged ones are not", () =>
    Effect.gen(function* () {
      const topic = `${randomPrefix()}/commands`
      const session: Partial<MqttOptions> = { clientId: `worker-${randomUUID()}`, clean: false, sessionExpirySeconds: 60 }
      const publisher = yield* connect()
      const [acked, unacked, later] = [event({ n: 1 }), event({ n: 2 }), event({ n: 3 })]

      yield* Effect.scoped(
        Effect.gen(function* () {
          const worker = yield* connect(session)
          const messages = yield* worker.subscribe(topic)
          yield* publisher.publish(topic, acked)
          yield* publisher.publish(topic, unacked)
          const [first, second] = yield* take(messages, 2)
          expect([eventOf(first).id, eventOf(second).id]).toEqual([acked.id, unacked.id])
          yield* first!.ack
          // The worker goes away with the second message claimed but not acknowledged.
        })
      )

      const worker = yield* connect(session)
      const messages = yield* worker.subscribe(topic)
      yield* publisher.publish(topic, later)
      const received = yield* take(messages, 2)
      expect(received.map((m) => eventOf(m).id)).toEqual([unacked.id, later.id])
      expect(received.map((m) => m.dup)).toEqual([true, false])
      for (const m of received) yield* m.ack
    }).pipe(Effect.scoped)
  )

  it.live("a shared subscription splits the messages between two clients", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const filter = `$share/workers/${prefix}/+/commands`
      const a = yield* connect()
      const b = yield* connect()
      const fromA = (yield* a.subscribe(filter)).pipe(Stream.map((m) => ({ client: "a", m })))
      const fromB = (yield* b.subscribe(filter)).pipe(Stream.map((m) => ({ client: "b", m })))
      const publisher = yield* connect()
      const sent = Array.from({ length: 10 }, (_, n) => event({ n }))
      for (const e of sent) yield* publisher.publish(`${prefix}/line-1/commands`, e)
      const received = yield* Stream.merge(fromA, fromB).pipe(
        Stream.take(10),
        Stream.tap(({ m }) => m.ack),
        Stream.runCollect,
        Effect.timeout("5 seconds")
      )
      expect(new Set(received.map(({ m }) => eventOf(m).id))).toEqual(new Set(sent.map((e) => e.id)))
      expect(received.filter((r) => r.client === "a").length).toBeGreaterThan(0)
      expect(received.filter((r) => r.client === "b").length).toBeGreaterThan(0)
    }).pipe(Effect.scoped)
  )

  it.live("two connections with one base get their own client ids and both stay connected", () =>
    Effect.gen(function* () {
      const topic = `${randomPrefix()}/ping`
      const one = yield* connect({ clientIdBase: "island-1" })
      const two = yield* connect({ clientIdBase: "island-1" })
      expect(one.clientId).not.toBe(two.clientId)
      expect(one.clientId).toMatch(/^island-1-[0-9a-f]{16}$/)
      const messages = yield* two.subscribe(topic)
      yield* one.publish(topic, event({ ping: 1 }))
      const [ping] = yield* take(messages, 1)
      yield* ping!.ack
      // Had the ids collided, the broker would have taken over the first session.
      expect(yield* one.status).toBe("connected")
      expect(yield* two.status).toBe("connected")
      expect(yield* two.subscriptions).toEqual([topic])
    }).pipe(Effect.scoped)
  )

  it.live("fails typed: bad topics, bad events, a broker that is not there", () =>
    Effect.gen(function* () {
      const conn = yield* connect()
      expect((yield* Effect.flip(conn.publish("a/+/b", event(1))))._tag).toBe("InvalidTopic")
      expect(yield* Effect.flip(conn.publish("a/b", { ...event(1), id: "" }))).toMatchObject({ _tag: "EncodeError", kind: "attributes" })
      expect((yield* Effect.flip(conn.subscribe("a/#/b")))._tag).toBe("InvalidTopic")
      const refused = yield* Effect.flip(makeMqttConnection({ url: "mqtt://127.0.0.1:1", connectTimeoutMs: 300, reconnectMinMs: 50 }))
      expect(refused._tag).toBe("MqttConnectError")
    }).pipe(Effect.scoped)
  )
})
