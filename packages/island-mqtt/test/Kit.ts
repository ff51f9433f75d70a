import { randomUUID } from "node:crypto"
import { Effect, Result, Layer, Stream } from "effect"
import {
  type CloudEvent,
  type IncomingMessage,
  makeCloudEvent,
  makeMqttConnection,
  MqttConnection,
  type MqttOptions,
  type TopicConfig
} from "@microdcs/cloudevents-mqtt"
import { JobControl, type JobControlRequest, jobControlLayer } from "@microdcs/job-control"
import { type InvalidInput, StoreUnavailable } from "@microdcs/store"
import { eventually } from "@microdcs/test-utils"
import { testStore } from "@microdcs/testkit"
import { JobControlIngress, type JobControlIngressOptions } from "@microdcs/island-mqtt"

/** Shared pieces of the island-mqtt tests (not a test file itself). */

export const SCOPE = "line-1"
export const ISLAND_SOURCE = "urn:microdcs:island:test"
export const MES_SOURCE = "urn:test:mes"

// Shared with the other packages' tests: polling with a deadline, instances in their own scope, the
// job order and response waits, and the key snapshot that shows whether anything was written.
export { eventually, fixture, startInstance } from "@microdcs/test-utils"
export { jobOrderState, responseOf, responseSummary, snapshot, untilJobOrderIs } from "@microdcs/testkit"

/** One wildcard level: the MES sends to `P/{scope}/commands`. */
export const topicsFor = (prefix: string): TopicConfig => ({ prefix, wildcardLevels: 1 })

export const storeFor = (prefix: string) => testStore({ prefix })

/** The island's connection: a receive maximum above the ingress concurrency. */
export const islandMqtt = (url: string, options: Partial<MqttOptions> = {}) =>
  MqttConnection.layer({ url, clientIdBase: "island", receiveMaximum: 100, reconnectMinMs: 100, connectTimeoutMs: 5000, ...options })

/** Fast retries and a short grace, so failure tests stay quick. */
export const ingressOptions = (prefix: string, options: Partial<JobControlIngressOptions> = {}): JobControlIngressOptions => ({
  topics: topicsFor(prefix),
  source: ISLAND_SOURCE,
  retryMinMs: 20,
  retryMaxMs: 200,
  shutdownGraceMs: 2000,
  ...options
})

/** The ingress over its own connection and a processor (real by default); the store is provided by the caller. */
export const ingressLayer = (
  url: string,
  prefix: string,
  options: {
    readonly jobControl?: Layer.Layer<JobControl, InvalidInput, Layer.Success<ReturnType<typeof storeFor>>>
    readonly mqtt?: Partial<MqttOptions>
    readonly ingress?: Partial<JobControlIngressOptions>
  } = {}
) =>
  JobControlIngress(ingressOptions(prefix, options.ingress)).pipe(
    Layer.provide(options.jobControl ?? jobControlLayer()),
    Layer.provide(islandMqtt(url, options.mqtt))
  )

/**
 * A processor that fails (StoreUnavailable) while `fail()` says so, then delegates to the real
 * one; `calls` counts every call. Stands in for a store that is briefly away.
 */
export const flakyJobControl = (fail: (call: number) => boolean, calls: { count: number }) =>
  Layer.effect(
    JobControl,
    Effect.map(JobControl, (real) =>
      JobControl.of({
        handle: (request: JobControlRequest) =>
          Effect.suspend(() => {
            calls.count++
            return fail(calls.count)
              ? Effect.fail(new StoreUnavailable({ operation: "test", message: "injected outage" }))
              : real.handle(request)
          })
      })
    )
  ).pipe(Layer.provide(jobControlLayer()))

/**
 * An MES on a plain connection: sends requests with its response topic and a correlation id,
 * and keeps every reply and every status event it receives.
 */
export const makeMes = (url: string, prefix: string, scope = SCOPE) =>
  Effect.gen(function* () {
    const connection = yield* makeMqttConnection({ url, clientIdBase: "mes", connectTimeoutMs: 5000 })
    const replyTopic = `${prefix}/replies/mes-${randomUUID().slice(0, 8)}`
    const commandTopic = `${prefix}/${scope}/commands`
    const replies: Array<IncomingMessage> = []
    const statusEvents: Array<CloudEvent> = []
    const collect = (into: (m: IncomingMessage) => void) => (stream: Stream.Stream<IncomingMessage>) =>
      stream.pipe(Stream.runForEach((m) => Effect.sync(() => into(m)).pipe(Effect.andThen(m.ack))), Effect.forkScoped)
    yield* collect((m) => replies.push(m))(yield* connection.subscribe(replyTopic))
    yield* collect((m) => Result.isSuccess(m.decoded) && statusEvents.push(m.decoded.success))(yield* connection.subscribe(`${prefix}/+/events`))

    const request = (type: string, data: unknown, extra: Partial<Parameters<typeof makeCloudEvent>[0]> = {}) =>
      makeCloudEvent({ source: MES_SOURCE, type, subject: scope, data, ...extra })

    /** Sends an event as a request; the correlation id is returned to find the reply. */
    const send = (event: CloudEvent, correlationId: string = randomUUID()) =>
      Effect.as(connection.publish(commandTopic, event, { responseTopic: replyTopic, correlationId }), correlationId)

    const repliesTo = (correlationId: string) =>
      replies.filter((m) => m.correlationData !== undefined && m.correlationData.equals(Buffer.from(correlationId.replaceAll("-", ""), "hex")))

    /** The reply to `correlationId` (a decoded CloudEvent), waiting for it. */
    const replyTo = (correlationId: string) =>
      eventually(
        Effect.sync(() => {
          const reply = repliesTo(correlationId)[0]
          return reply && Result.isSuccess(reply.decoded) ? reply.decoded.success : undefined
        })
      )

    /** Sends a request and waits for its reply. */
    const call = (type: string, data: unknown, extra: Partial<Parameters<typeof makeCloudEvent>[0]> = {}) =>
      Effect.flatMap(send(request(type, data, extra)), replyTo)

    return { connection, replyTopic, commandTopic, replies, statusEvents, request, send, repliesTo, replyTo, call } as const
  })

export type Mes = Effect.Success<ReturnType<typeof makeMes>>
