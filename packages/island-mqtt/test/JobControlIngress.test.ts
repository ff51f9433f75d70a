import { randomUUID } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Result, Fiber, Layer, Stream } from "effect"
import { type IncomingMessage, makeMqttConnection, MSGPACK_CONTENT_TYPE } from "@microdcs/cloudevents-mqtt"
import { ERROR_REPLY_TYPE, JobControl, jobControlLayer } from "@microdcs/job-control"
import { MethodEventTypes, ReturnStatus } from "@microdcs/job-state"
import { ChangeStream } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import { STATUS_EVENT_TYPE } from "@microdcs/island-mqtt"
import {
  eventually,
  flakyJobControl,
  ingressLayer,
  ISLAND_SOURCE,
  jobOrderState,
  makeMes,
  MES_SOURCE,
  SCOPE,
  snapshot,
  startInstance,
  storeFor
} from "./Kit.js"

const broker = mosquittoForFile()

type IngressSettings = Parameters<typeof ingressLayer>[2]

/** The island's ingress over the file's broker, with its own store connection. */
const island = (prefix: string, settings: IngressSettings = {}) => ingressLayer(broker.url, prefix, settings).pipe(Layer.provide(storeFor(prefix)))

/** A persistent session: the broker keeps unacknowledged messages for this client id. */
const persistentSession = () => ({ clientId: `island-${randomUUID().slice(0, 8)}`, clean: false, sessionExpirySeconds: 60 })

const storeEvent = MethodEventTypes.Store
const jobOrder = (id: string) => ({ JobOrder: { JobOrderID: id, Priority: 1 } })

/** `mdcserrorkind` of a reply, read from its properties (a reply to bad correlation data does not decode). */
const errorKindOf = (message: IncomingMessage | undefined) => message?.properties.userProperties?.["mdcserrorkind"]

const storeChanges = (id: string) =>
  Effect.flatMap(ChangeStream, (changes) => changes.read(SCOPE, { after: "0", count: 1000 })).pipe(
    Effect.map((page) => page.entries.filter((e) => e.id === id && e.change === "Store").length)
  )

describe("JobControlIngress", () => {
  it.live("answers methods with ReturnStatus (correlated, caused by the request) and publishes status events", () => {
    const prefix = randomPrefix("im")
    return Effect.gen(function* () {
      yield* startInstance(island(prefix))
      const mes = yield* makeMes(broker.url, prefix)

      const store = mes.request(storeEvent, jobOrder("jo-1"))
      const correlationId = yield* mes.send(store)
      const reply = yield* mes.replyTo(correlationId)
      expect(reply.type).toBe("org.opcfoundation.ISA95-JOBCONTROL_V2.StoreResponse.v2")
      expect(reply.data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, JobOrderID: "jo-1" })
      expect(reply.source).toBe(ISLAND_SOURCE)
      expect(reply.id).not.toBe(store.id)
      expect(reply.extensions).toMatchObject({ causationid: store.id, correlationid: correlationId })
      expect(reply.extensions["mdcserrorkind"]).toBeUndefined()

      const storeAndStart = yield* mes.call(MethodEventTypes.StoreAndStart, jobOrder("jo-2"), { datacontenttype: MSGPACK_CONTENT_TYPE })
      expect(storeAndStart.datacontenttype).toBe(MSGPACK_CONTENT_TYPE)
      expect(storeAndStart.data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, JobOrderID: "jo-2" })
      expect((yield* mes.call(MethodEventTypes.Start, { JobOrderID: "jo-1" })).data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })

      const again = yield* mes.call(MethodEventTypes.Start, { JobOrderID: "jo-1" })
      expect(again.data).toMatchObject({ ReturnStatus: ReturnStatus.INVALID_JOB_ORDER_STATUS })
      expect(again.extensions["mdcserrorkind"]).toBeDefined()
      expect((yield* mes.call(MethodEventTypes.Start, { JobOrderID: "jo-unknown" })).data).toMatchObject({ ReturnStatus: ReturnStatus.UNKNOWN_JOB_ORDER_ID })

      expect(yield* jobOrderState("jo-1")).toBe("AllowedToStart_Ready")
      expect(yield* jobOrderState("jo-2")).toBe("AllowedToStart_Ready")

      // One status event per landed transition, on P/{scope}/events.
      const events = yield* eventually(Effect.sync(() => (mes.statusEvents.length >= 3 ? mes.statusEvents : undefined)))
      expect(events).toHaveLength(3)
      for (const event of events) expect(event).toMatchObject({ type: STATUS_EVENT_TYPE, source: ISLAND_SOURCE, subject: SCOPE })
      const byJob = events.map((e) => e.data as Record<string, unknown>).sort((a, b) => `${a["JobOrderID"]}${a["Version"]}`.localeCompare(`${b["JobOrderID"]}${b["Version"]}`))
      expect(byJob.map((d) => [d["JobOrderID"], d["Method"], d["Version"]])).toEqual([
        ["jo-1", "Store", 1],
        ["jo-1", "Start", 2],
        ["jo-2", "StoreAndStart", 1]
      ])
      expect(byJob[0]!["JobState"]).toEqual([
        { StateText: { Text: "NotAllowedToStart", Locale: "en" }, StateNumber: 1 },
        { StateText: { Text: "Ready", Locale: "en" }, StateNumber: 2 }
      ])
      expect(events.find((e) => (e.data as Record<string, unknown>)["Method"] === "Store")?.extensions["causationid"]).toBe(store.id)
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("processes a request delivered twice once, answers both with the same reply and acknowledges both", () => {
    const prefix = randomPrefix("im")
    const session = persistentSession()
    return Effect.gen(function* () {
      const instance = yield* startInstance(island(prefix, { mqtt: session }))
      const mes = yield* makeMes(broker.url, prefix)
      const request = mes.request(storeEvent, jobOrder("jo-dup"))
      const correlationId = randomUUID()
      yield* mes.send(request, correlationId)
      yield* mes.send(request, correlationId)
      expect((yield* mes.replyTo(correlationId)).data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })
      // The duplicate is answered too, with the first reply kept with the done mark.
      const [reply, again] = yield* eventually(Effect.sync(() => (mes.repliesTo(correlationId).length >= 2 ? mes.repliesTo(correlationId) : undefined)))
      expect(again?.payload).toEqual(reply?.payload)
      expect(again?.properties.userProperties).toEqual(reply?.properties.userProperties)
      // Closing the island lets both in-flight deliveries finish.
      yield* instance.stop

      // Reconnect as the island's client id: the broker resends what was never acknowledged
      // before anything newer, so the first message must be the sentinel sent now.
      const probe = yield* makeMqttConnection({ url: broker.url, ...session })
      const inbox = yield* probe.subscribe(`${prefix}/+/commands`)
      const sentinel = mes.request(storeEvent, jobOrder("jo-sentinel"))
      yield* mes.send(sentinel)
      const [first] = yield* inbox.pipe(Stream.take(1), Stream.runCollect, Effect.timeout("5 seconds"))
      expect(first && Result.isSuccess(first.decoded) ? first.decoded.success.id : undefined).toBe(sentinel.id)

      expect(mes.repliesTo(correlationId)).toHaveLength(2)
      expect(yield* storeChanges("jo-dup")).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("a failing handler gives its claim back and the message is processed on redelivery", () => {
    const prefix = randomPrefix("im")
    const calls = { count: 0 }
    return Effect.gen(function* () {
      yield* startInstance(island(prefix, { jobControl: flakyJobControl((n) => n <= 2, calls) }))
      const mes = yield* makeMes(broker.url, prefix)
      const correlationId = yield* mes.send(mes.request(storeEvent, jobOrder("jo-flaky")))
      expect((yield* mes.replyTo(correlationId)).data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })
      // Two failures, then the redelivery: had a claim not been released, it would be Busy and skipped.
      expect(calls.count).toBe(3)
      expect(mes.repliesTo(correlationId)).toHaveLength(1)
      expect(yield* jobOrderState("jo-flaky")).toBe("NotAllowedToStart_Ready")
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("a message that failed until shutdown stays unacknowledged and the broker redelivers it to the next instance", () => {
    const prefix = randomPrefix("im")
    const session = persistentSession()
    const calls = { count: 0 }
    return Effect.gen(function* () {
      const failing = yield* startInstance(
        island(prefix, { mqtt: session, jobControl: flakyJobControl(() => true, calls), ingress: { shutdownGraceMs: 100 } })
      )
      const mes = yield* makeMes(broker.url, prefix)
      const request = mes.request(storeEvent, jobOrder("jo-redelivered"))
      const correlationId = yield* mes.send(request)
      yield* eventually(Effect.sync(() => (calls.count >= 2 ? true : undefined)))
      yield* failing.stop
      expect(mes.repliesTo(correlationId)).toHaveLength(0)
      expect(yield* jobOrderState("jo-redelivered")).toBeUndefined()

      yield* startInstance(island(prefix, { mqtt: session }))
      expect((yield* mes.replyTo(correlationId)).data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR, JobOrderID: "jo-redelivered" })
      expect(yield* jobOrderState("jo-redelivered")).toBe("NotAllowedToStart_Ready")
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("bad input gets an error reply and changes nothing", () => {
    const prefix = randomPrefix("im")
    return Effect.gen(function* () {
      yield* startInstance(island(prefix, { mqtt: { maxPayloadBytes: 64 * 1024 } }))
      const mes = yield* makeMes(broker.url, prefix)
      yield* mes.call(storeEvent, jobOrder("jo-ok"))
      const before = yield* snapshot

      /** A raw publish with CloudEvent user properties, so the payload can be anything. */
      const raw = (payload: Buffer, props: { contentType?: string; correlationData: Buffer; type?: string }) =>
        mes.connection.publishRaw(mes.commandTopic, payload, {
          properties: {
            responseTopic: mes.replyTopic,
            correlationData: props.correlationData,
            ...(props.contentType !== undefined ? { contentType: props.contentType } : {}),
            userProperties: { specversion: "1.0", id: randomUUID(), source: MES_SOURCE, type: props.type ?? storeEvent, subject: SCOPE }
          }
        })
      const uuidBytes = (id: string) => Buffer.from(id.replaceAll("-", ""), "hex")
      const rawReply = (bytes: Buffer) => eventually(Effect.sync(() => mes.replies.find((m) => m.correlationData?.equals(bytes))))

      const unparsable = randomUUID()
      yield* raw(Buffer.from('{"JobOrder": {'), { contentType: "application/json", correlationData: uuidBytes(unparsable) })
      expect(errorKindOf(yield* rawReply(uuidBytes(unparsable)))).toBe("payload")

      const textPlain = randomUUID()
      yield* raw(Buffer.from("hello"), { contentType: "text/plain", correlationData: uuidBytes(textPlain) })
      expect(errorKindOf(yield* rawReply(uuidBytes(textPlain)))).toBe("content-type")

      // Correlation data that is no UUID is echoed as it came, so the sender can still correlate.
      const shortCorrelation = Buffer.from([1, 2, 3])
      yield* raw(Buffer.from(JSON.stringify(jobOrder("jo-bad-correlation"))), { contentType: "application/json", correlationData: shortCorrelation })
      expect(errorKindOf(yield* rawReply(shortCorrelation))).toBe("correlation")

      const oversized = yield* mes.call(storeEvent, { JobOrder: { JobOrderID: "jo-big", Description: "x".repeat(100 * 1024) } })
      expect(oversized.extensions["mdcserrorkind"]).toBe("too-large")
      expect(oversized).toMatchObject({ type: ERROR_REPLY_TYPE, data: { ReturnStatus: ReturnStatus.INVALID_REQUEST } })

      const unknownType = yield* mes.call("com.example.NotAJobControlType.v1", jobOrder("jo-unknown-type"))
      expect(unknownType).toMatchObject({ type: ERROR_REPLY_TYPE, data: { ReturnStatus: ReturnStatus.INVALID_REQUEST } })
      expect(unknownType.extensions["mdcserrorkind"]).toBe("UnknownType")

      const noJobOrder = yield* mes.call(storeEvent, { Comment: "no job order" })
      expect(noJobOrder.data).toMatchObject({ ReturnStatus: ReturnStatus.INVALID_REQUEST })
      expect(noJobOrder.extensions["mdcserrorkind"]).toBe("MissingField")

      const noSubject = yield* mes.call(storeEvent, jobOrder("jo-no-subject"), { subject: undefined })
      expect(noSubject.extensions["mdcserrorkind"]).toBe("MissingSubject")

      // Not even a dedupe claim was written.
      expect(yield* snapshot).toEqual(before)
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("on shutdown it stops taking messages and finishes the one in flight", () => {
    const prefix = randomPrefix("im")
    return Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const proceed = yield* Deferred.make<void>()
      const gated = Layer.effect(
        JobControl,
        Effect.map(JobControl, (real) =>
          JobControl.of({
            handle: (request) => Deferred.succeed(started, undefined).pipe(Effect.andThen(Deferred.await(proceed)), Effect.andThen(real.handle(request)))
          })
        )
      ).pipe(Layer.provide(jobControlLayer()))
      const instance = yield* startInstance(island(prefix, { jobControl: gated }))
      const mes = yield* makeMes(broker.url, prefix)
      const correlationId = yield* mes.send(mes.request(storeEvent, jobOrder("jo-in-flight")))
      yield* Deferred.await(started)
      const stopping = yield* Effect.forkChild(instance.stop)
      yield* Effect.sleep("100 millis")
      yield* Deferred.succeed(proceed, undefined)
      yield* Fiber.join(stopping)
      expect((yield* mes.replyTo(correlationId)).data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })
      expect(yield* jobOrderState("jo-in-flight")).toBe("NotAllowedToStart_Ready")
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })
})
