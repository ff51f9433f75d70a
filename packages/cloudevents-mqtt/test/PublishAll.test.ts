import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Fiber, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { randomPrefix } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import { type IncomingMessage, makeCloudEvent, makeMqttConnection, type OutgoingMessage } from "@microdcs/cloudevents-mqtt"

const broker = mosquittoForFile()

const connect = (clientIdBase: string) => makeMqttConnection({ url: broker.url, clientIdBase, reconnectMinMs: 100, connectTimeoutMs: 5000 })

const take = (stream: Stream.Stream<IncomingMessage>, n: number) =>
  stream.pipe(Stream.take(n), Stream.runCollect, Effect.timeout("5 seconds"))

const event = (n: number) => makeCloudEvent({ source: "urn:test", type: "com.example.status.v1", subject: "line-1", data: { n } })

describe("MqttConnection.publishAll", () => {
  it.live("sends a reply and events together, in order, with one outcome each; a message that cannot be sent fails alone", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const island = yield* connect("island")
      const mes = yield* connect("mes")
      const requests = yield* island.subscribe(`${prefix}/commands`)
      const replies = yield* mes.subscribe(`${prefix}/replies/mes`)
      const events = yield* mes.subscribe(`${prefix}/events`)
      const gotEvents = yield* Effect.forkChild(take(events, 3))
      const gotReply = yield* Effect.forkChild(take(replies, 1))

      const correlationId = randomUUID()
      const request = event(0)
      yield* mes.publish(`${prefix}/commands`, request, { responseTopic: `${prefix}/replies/mes`, correlationId })
      const [incoming] = yield* take(requests, 1)
      const batch: ReadonlyArray<OutgoingMessage> = [
        { _tag: "Reply", request: incoming!, event: makeCloudEvent({ source: "urn:island", type: "com.example.reply.v1", data: { ok: true } }) },
        { _tag: "Publish", topic: `${prefix}/events`, event: event(1) },
        { _tag: "Publish", topic: `${prefix}/events/#`, event: event(99) },
        { _tag: "Publish", topic: `${prefix}/events`, event: event(2) },
        { _tag: "Publish", topic: `${prefix}/events`, event: event(3), options: { qos: 0 } }
      ]
      const outcomes = yield* island.publishAll(batch)
      yield* incoming!.ack

      expect(outcomes.map((o) => o?._tag)).toEqual([undefined, undefined, "InvalidTopic", undefined, undefined])
      const [reply] = yield* Fiber.join(gotReply)
      expect(Result.getOrThrow(reply!.decoded).extensions).toMatchObject({ correlationid: correlationId, causationid: request.id })
      const received = (yield* Fiber.join(gotEvents)).map((m) => (Result.getOrThrow(m.decoded).data as { n: number }).n)
      expect(received).toEqual([1, 2, 3])
      yield* reply!.ack
    }).pipe(Effect.scoped)
  )

  it.live("a reply to a request without a response topic is skipped, an empty batch is done at once", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const island = yield* connect("island")
      const mes = yield* connect("mes")
      const requests = yield* island.subscribe(`${prefix}/commands`)
      yield* mes.publish(`${prefix}/commands`, event(0))
      const [incoming] = yield* take(requests, 1)
      expect(yield* island.publishAll([{ _tag: "Reply", request: incoming!, event: event(1) }])).toEqual([undefined])
      expect(yield* island.publishAll([])).toEqual([])
      yield* incoming!.ack
    }).pipe(Effect.scoped)
  )
})
