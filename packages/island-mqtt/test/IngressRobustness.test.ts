import { randomUUID } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Logger, References, Stream } from "effect"
import { MqttConnection, type MqttOptions, type MqttStatus } from "@microdcs/cloudevents-mqtt"
import { ERROR_REPLY_TYPE, jobControlLayer } from "@microdcs/job-control"
import { MethodEventTypes, ReturnStatus } from "@microdcs/job-state"
import { randomPrefix } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import { JobControlIngress, type JobControlIngressOptions } from "@microdcs/island-mqtt"
import { eventually, ingressOptions, islandMqtt, makeMes, MES_SOURCE, SCOPE, snapshot, storeFor } from "./Kit.js"

/** The ingress under hostile input: what could stop it, drop its connection or fill its memory. */

const broker = mosquittoForFile()

/** The ingress in the test's scope, with its connection at hand (to watch its status). */
const startIsland = (prefix: string, settings: { mqtt?: Partial<MqttOptions>; ingress?: Partial<JobControlIngressOptions> } = {}) =>
  Effect.gen(function* () {
    const layer = JobControlIngress(ingressOptions(prefix, settings.ingress)).pipe(
      Layer.provide(jobControlLayer()),
      Layer.provideMerge(islandMqtt(broker.url, settings.mqtt)),
      Layer.provide(storeFor(prefix))
    )
    const mqtt = Context.get(yield* Layer.build(layer), MqttConnection)
    const statuses: Array<MqttStatus> = []
    yield* mqtt.statusChanges.pipe(
      Stream.runForEach((status) => Effect.sync(() => statuses.push(status))),
      Effect.forkScoped
    )
    return { mqtt, statuses }
  })

const jobOrder = (id: string, extra: Record<string, unknown> = {}) => ({ JobOrder: { JobOrderID: id, Priority: 1, ...extra } })

type Mes = Effect.Success<ReturnType<typeof makeMes>>

/** Sends bytes as a Store request's payload (what the MES's own encoder would refuse to send); the correlation id is returned. */
const rawStore = (mes: Mes, payload: Buffer, id: string = randomUUID()) =>
  Effect.gen(function* () {
    const correlationId = randomUUID()
    yield* mes.connection.publishRaw(mes.commandTopic, payload, {
      properties: {
        responseTopic: mes.replyTopic,
        correlationData: Buffer.from(correlationId.replaceAll("-", ""), "hex"),
        contentType: "application/json",
        userProperties: { specversion: "1.0", id, source: MES_SOURCE, type: MethodEventTypes.Store, subject: SCOPE }
      }
    })
    return correlationId
  })

interface LogLine {
  readonly message: unknown
  readonly level: string
  readonly annotations: Record<string, unknown>
}

/** A logger that keeps every line, to check what the ingress logs. */
const capturingLogger = (lines: Array<LogLine>) =>
  Logger.layer([
    Logger.make(({ fiber, logLevel, message }) => {
      // The level as v3's label spelled it (DEBUG, INFO), which the assertions below use.
      lines.push({ message: Array.isArray(message) ? message[0] : message, level: logLevel.toUpperCase(), annotations: { ...fiber.getRef(References.CurrentLogAnnotations) } })
    })
  ])

describe("JobControlIngress under hostile input", () => {
  it.live("a refusal quoting an id with a control character is answered (escaped) and the island's connection stays up", () => {
    const prefix = randomPrefix("ir")
    return Effect.gen(function* () {
      const island = yield* startIsland(prefix)
      const mes = yield* makeMes(broker.url, prefix)
      const refused = yield* mes.call(MethodEventTypes.Start, { JobOrderID: "jo-\tx" })
      expect(refused.data).toMatchObject({ ReturnStatus: expect.any(Number) })
      expect(refused.data).not.toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })
      expect(refused.extensions["mdcserrormessage"]).toContain("jo-\\u0009x")
      // The same connection answers the next request: mosquitto never dropped it.
      expect((yield* mes.call(MethodEventTypes.Store, jobOrder("jo-after"))).data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })
      expect(yield* island.mqtt.status).toBe("connected")
      expect(island.statuses).not.toContain("reconnecting")
    }).pipe(Effect.scoped)
  })

  it.live("20 requests with a refused response topic ($SYS/x) are dropped and counted, and a valid request after them is answered", () => {
    const prefix = randomPrefix("ir")
    const dropped: Array<string> = []
    return Effect.gen(function* () {
      yield* startIsland(prefix, { ingress: { onPublishDropped: (what, reason) => void dropped.push(`${what}:${reason}`) } })
      const mes = yield* makeMes(broker.url, prefix)
      for (let i = 0; i < 20; i++) {
        const request = mes.request(MethodEventTypes.Store, jobOrder(`jo-sys-${i}`))
        yield* mes.connection.publish(mes.commandTopic, request, { responseTopic: "$SYS/x", correlationId: randomUUID() })
      }
      // More than the ingress concurrency (16): slots held by those replies would stall this one.
      const answer = yield* mes.call(MethodEventTypes.Store, jobOrder("jo-valid"))
      expect(answer.data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR, JobOrderID: "jo-valid" })
      yield* eventually(Effect.sync(() => (dropped.length >= 20 ? true : undefined)))
      expect(dropped).toEqual(Array.from({ length: 20 }, () => "reply:invalid-topic"))
    }).pipe(Effect.scoped)
  })

  it.live("a payload over the packet limit is dropped by the broker; one just over the payload limit gets a too-large reply", () => {
    const prefix = randomPrefix("ir")
    return Effect.gen(function* () {
      const island = yield* startIsland(prefix, { mqtt: { maxPayloadBytes: 16 * 1024 } })
      const mes = yield* makeMes(broker.url, prefix)
      const huge = yield* rawStore(mes, Buffer.from(JSON.stringify(jobOrder("jo-huge", { Description: "x".repeat(1024 * 1024) }))))
      const over = yield* Effect.flatMap(rawStore(mes, Buffer.from(JSON.stringify(jobOrder("jo-over", { Description: "x".repeat(20 * 1024) })))), mes.replyTo)
      expect(over.extensions["mdcserrorkind"]).toBe("too-large")
      expect((yield* mes.call(MethodEventTypes.Store, jobOrder("jo-fine"))).data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })
      // The huge one never reached the island, so nothing answers it.
      expect(mes.repliesTo(huge)).toHaveLength(0)
      expect(island.statuses).not.toContain("reconnecting")
    }).pipe(Effect.scoped)
  })

  it.live("deeply nested JSON is refused as a payload error with INVALID_REQUEST, and nothing is written", () => {
    const prefix = randomPrefix("ir")
    return Effect.gen(function* () {
      yield* startIsland(prefix)
      const mes = yield* makeMes(broker.url, prefix)
      yield* mes.call(MethodEventTypes.Store, jobOrder("jo-first"))
      const before = yield* snapshot
      const deep = `{"JobOrder":{"JobOrderID":"jo-deep","Priority":1,"Parameters":${"[".repeat(100_000)}1${"]".repeat(100_000)}}}`
      const reply = yield* Effect.flatMap(rawStore(mes, Buffer.from(deep)), mes.replyTo)
      expect(reply).toMatchObject({ type: ERROR_REPLY_TYPE, data: { ReturnStatus: ReturnStatus.INVALID_REQUEST } })
      expect(reply.extensions["mdcserrorkind"]).toBe("payload")
      expect(reply.extensions["mdcserrormessage"]).toContain("nests deeper than 64 levels")
      expect(yield* snapshot).toEqual(before)
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("every handled or refused request gets one line with type, scope, id, outcome and duration (debug when answered as asked, info when refused); the type is bounded", () => {
    const prefix = randomPrefix("ir")
    const lines: Array<LogLine> = []
    return Effect.gen(function* () {
      yield* startIsland(prefix)
      const mes = yield* makeMes(broker.url, prefix)
      const stored = mes.request(MethodEventTypes.Store, jobOrder("jo-logged"))
      yield* Effect.flatMap(mes.send(stored), mes.replyTo)
      const longType = `com.example.${"x".repeat(5000)}.v1`
      const unknown = mes.request(longType, {})
      yield* Effect.flatMap(mes.send(unknown), mes.replyTo)
      yield* Effect.flatMap(rawStore(mes, Buffer.from("{oops"), "bad-1"), mes.replyTo)
      const requestLines = yield* eventually(
        Effect.sync(() => {
          const found = lines.filter((line) => line.message === "job control request")
          return found.length >= 3 ? found : undefined
        })
      )
      expect(requestLines).toHaveLength(3)
      for (const line of requestLines) {
        expect(line.level).toBe(line.annotations["outcome"] === "processed" ? "DEBUG" : "INFO")
        expect(line.annotations).toMatchObject({ scope: SCOPE, reply: "sent" })
        expect(typeof line.annotations["durationMs"]).toBe("number")
      }
      const byId = (id: string) => requestLines.find((line) => line.annotations["id"] === id)?.annotations
      expect(byId(stored.id)).toMatchObject({ type: MethodEventTypes.Store, outcome: "processed" })
      expect(byId(unknown.id)).toMatchObject({ outcome: "refused", kind: "UnknownType" })
      expect(String(byId(unknown.id)?.["type"]).length).toBeLessThanOrEqual(200)
      expect(byId("bad-1")).toMatchObject({ type: MethodEventTypes.Store, outcome: "refused", kind: "payload" })
    }).pipe(Effect.scoped, Effect.provide(capturingLogger(lines)), Effect.provideService(References.MinimumLogLevel, "Debug"))
  })

  it.live("at info level a request answered as asked logs no line, a refused one still does", () => {
    const prefix = randomPrefix("ir")
    const lines: Array<LogLine> = []
    return Effect.gen(function* () {
      yield* startIsland(prefix)
      const mes = yield* makeMes(broker.url, prefix)
      const stored = mes.request(MethodEventTypes.Store, jobOrder("jo-quiet"))
      yield* Effect.flatMap(mes.send(stored), mes.replyTo)
      const again = mes.request(MethodEventTypes.Store, jobOrder("jo-quiet"))
      yield* Effect.flatMap(mes.send(again), mes.replyTo)
      const requestLines = yield* eventually(
        Effect.sync(() => {
          const found = lines.filter((line) => line.message === "job control request")
          return found.length >= 1 ? found : undefined
        })
      )
      // Only the second Store (AlreadyExists, a refusal by the processor) is logged.
      expect(requestLines.map((line) => [line.level, line.annotations["id"], line.annotations["kind"]])).toEqual([["INFO", again.id, "AlreadyExists"]])
    }).pipe(Effect.scoped, Effect.provide(capturingLogger(lines)), Effect.provideService(References.MinimumLogLevel, "Info"))
  })
})
