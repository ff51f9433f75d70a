import { Context, Duration, Effect, Layer, Option, Queue, type Scope, Stream, SubscriptionRef } from "effect"
import type { IClientPublishOptions, IPublishPacket, MqttClient } from "mqtt"
import { decode, DEFAULT_MAX_PAYLOAD_BYTES, encode, type PublishProperties } from "./Binary.js"
import type { CloudEvent } from "./CloudEvent.js"
import { type EncodeError, type InvalidTopic, type MqttConnectError, MqttPublishError, MqttSubscribeError } from "./Errors.js"
import type { IncomingMessage } from "./Incoming.js"
import { acquireClient, type MqttSession, type MqttStatus } from "./MqttClient.js"
import { limitsProblem, mqttDefaults, type MqttOptions } from "./MqttOptions.js"
import { mqttStringProblem, toMqttString } from "./MqttString.js"
import { prepareReply } from "./Reply.js"
import { topicMatches, uniqueClientId, validateClientId, validateFilter, validateResponseTopic, validateTopicName } from "./Topics.js"

export interface PublishOptions {
  /** Default 1. */
  readonly qos?: 0 | 1 | 2 | undefined
  readonly retain?: boolean | undefined
  /** MQTT Message Expiry Interval: the broker drops the message (retained copy included) after this long. */
  readonly messageExpirySeconds?: number | undefined
  readonly responseTopic?: string | undefined
  /** Sets the `correlationid` extension (a UUID), carried as Correlation Data. */
  readonly correlationId?: string | undefined
}

export interface PublishRawOptions {
  readonly qos?: 0 | 1 | 2 | undefined
  readonly retain?: boolean | undefined
  readonly properties?: PublishProperties | undefined
}

export interface SubscribeOptions {
  /** Default 1. Messages published with QoS 2 arrive with QoS 1. */
  readonly qos?: 0 | 1 | undefined
  /**
   * Leave the subscription in the broker's session when the scope closes (no UNSUBSCRIBE).
   * With a persistent session, messages published while this client is away (a restart) are
   * then kept for it instead of dropped. Default false.
   */
  readonly keepInSession?: boolean | undefined
}

export type PublishFailure = InvalidTopic | EncodeError | MqttPublishError

export interface MqttConnectionService {
  readonly clientId: string
  readonly status: Effect.Effect<MqttStatus>
  /** The current status, then every change. */
  readonly statusChanges: Stream.Stream<MqttStatus>
  /**
   * The current broker session, then one per CONNACK. A reconnect with `sessionPresent: false`
   * found a broker that kept nothing of this client, retained messages perhaps included (a
   * restart without persistence): the publisher republishes then.
   */
  readonly sessions: Stream.Stream<MqttSession>
  /** The filters with a live subscription stream. */
  readonly subscriptions: Effect.Effect<ReadonlyArray<string>>
  /** Publishes an event in binary mode; with QoS 1 it completes on PUBACK. */
  readonly publish: (topic: string, event: CloudEvent, options?: PublishOptions) => Effect.Effect<void, PublishFailure>
  /** Publishes bytes as they are, e.g. a zero-byte retained message that deletes the retained one. */
  readonly publishRaw: (topic: string, payload: Buffer, options?: PublishRawOptions) => Effect.Effect<void, InvalidTopic | MqttPublishError>
  /**
   * Subscribes (done when the SUBACK arrived) and returns the messages matching the filter; the
   * subscription ends with the scope. A message matching several live filters goes to the first.
   */
  readonly subscribe: (
    filter: string,
    options?: SubscribeOptions
  ) => Effect.Effect<Stream.Stream<IncomingMessage>, InvalidTopic | MqttSubscribeError, Scope.Scope>
  /**
   * Sends `event` to the request's response topic (QoS 1) with the request's correlation data and
   * `causationid` = the request's id. Without a response topic it logs and does nothing; a response
   * topic that is no valid topic name or starts with `$` (`$SYS/...`) fails with `InvalidTopic`.
   */
  readonly reply: (request: IncomingMessage, event: CloudEvent) => Effect.Effect<void, PublishFailure>
}

export class MqttConnection extends Context.Tag("@microdcs/cloudevents-mqtt/MqttConnection")<MqttConnection, MqttConnectionService>() {
  /** The service over one connection; the client ends when the layer is released. */
  static readonly layer = (options: MqttOptions): Layer.Layer<MqttConnection, MqttConnectError | InvalidTopic> =>
    Layer.scoped(MqttConnection, makeMqttConnection(options))
}

interface Route {
  readonly filter: string
  readonly queue: Queue.Queue<IncomingMessage>
}

/**
 * Messages that arrive before their subscription stream exists: a resumed session redelivers
 * right after CONNACK, before the consumer has subscribed again. They wait here, unacknowledged;
 * past this many the oldest is dropped (unacknowledged, so the broker sends it again next session).
 */
const MAX_UNROUTED = 1000

/** The first string of raw properties that mosquitto would refuse (and drop the connection for), if any. */
const propertiesProblem = (properties: PublishProperties): string | undefined => {
  const named: Array<[string, string]> = []
  if (properties.contentType !== undefined) named.push(["content type", properties.contentType])
  if (properties.responseTopic !== undefined) named.push(["response topic", properties.responseTopic])
  for (const [name, value] of Object.entries(properties.userProperties ?? {})) {
    named.push(["user property name", name])
    for (const text of [value].flat()) named.push([`user property ${toMqttString(name, 100)}`, String(text)])
  }
  for (const [what, text] of named) {
    const problem = mqttStringProblem(text)
    if (problem) return `${what} ${problem}`
  }
  return undefined
}

/** mqtt.js reports a PUBACK failure as an error with the reason code in `code`. */
const reasonCodeOf = (error: Error): number | undefined => {
  const code: unknown = (error as { code?: unknown }).code
  return typeof code === "number" && code >= 0x80 ? code : undefined
}

export const makeMqttConnection = (options: MqttOptions): Effect.Effect<MqttConnectionService, MqttConnectError | InvalidTopic, Scope.Scope> =>
  Effect.gen(function* () {
    const clientId = options.clientId !== undefined ? yield* validateClientId(options.clientId) : yield* uniqueClientId(options.clientIdBase ?? mqttDefaults.clientIdBase)
    // A caller's bug, not a condition to handle: mqtt.js would silently announce other limits.
    const limits = limitsProblem(options)
    if (limits !== undefined) return yield* Effect.dieMessage(limits)
    const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES
    const decodeOptions = { maxPayloadBytes, maxNestingDepth: options.maxNestingDepth }
    const receiveMaximum = options.receiveMaximum ?? mqttDefaults.receiveMaximum
    const publishTimeout = Duration.millis(options.publishTimeoutMs ?? mqttDefaults.publishTimeoutMs)
    const routes: Array<Route> = []
    const unrouted: Array<IncomingMessage> = []

    const toIncoming = (topic: string, payload: Buffer, packet: IPublishPacket, ack: Effect.Effect<void>): IncomingMessage => {
      const properties: PublishProperties = packet.properties ?? {}
      return {
        topic,
        decoded: decode(topic, payload, properties, decodeOptions),
        ...(typeof properties.responseTopic === "string" ? { responseTopic: properties.responseTopic } : {}),
        ...(properties.correlationData instanceof Uint8Array ? { correlationData: Buffer.from(properties.correlationData) } : {}),
        payload,
        properties,
        qos: packet.qos,
        retain: packet.retain,
        dup: packet.dup,
        ack
      }
    }

    const sink = (topic: string, payload: Buffer, packet: IPublishPacket, ack: Effect.Effect<void>) => {
      const route = routes.find((r) => topicMatches(r.filter, topic))
      // Receive Maximum bounds only QoS 1 and 2. A QoS 0 flood is held to the same count and the
      // rest dropped, which QoS 0 (at most once) allows, before it is even decoded.
      if (packet.qos === 0 && route && Option.getOrElse(route.queue.unsafeSize(), () => 0) >= receiveMaximum) return
      const message = toIncoming(topic, payload, packet, ack)
      if (route) {
        Queue.unsafeOffer(route.queue, message)
        return
      }
      if (unrouted.length >= MAX_UNROUTED) unrouted.shift()
      unrouted.push(message)
    }

    const live = yield* acquireClient(options, clientId, sink)
    const client: MqttClient = live.client

    // The PUBACK timeout is a timer inside the one async step, not `Effect.timeoutFail`: that
    // races a second fiber on every publish, which cost more than the publish itself.
    const send = (topic: string, payload: Buffer, publishOptions: IClientPublishOptions): Effect.Effect<void, MqttPublishError> =>
      Effect.async<void, MqttPublishError>((resume) => {
        if (live.isClosing()) return resume(Effect.fail(new MqttPublishError({ topic, reason: "closed", message: "connection is closing" })))
        let settled = false
        const timer = setTimeout(() => {
          settled = true
          resume(Effect.fail(new MqttPublishError({ topic, reason: "timeout", message: `no PUBACK within ${Duration.format(publishTimeout)}` })))
        }, Duration.toMillis(publishTimeout))
        client.publish(topic, payload, publishOptions, (error) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          resume(
            error
              ? Effect.fail(new MqttPublishError({ topic, reason: live.isClosing() ? "closed" : "rejected", message: error.message, reasonCode: reasonCodeOf(error) }))
              : Effect.void
          )
        })
        return Effect.sync(() => {
          settled = true
          clearTimeout(timer)
        })
      })

    const expiryProperty = (topic: string, seconds: number | undefined) =>
      seconds === undefined
        ? Effect.succeed({})
        : Number.isInteger(seconds) && seconds > 0 && seconds <= 0xffffffff
          ? Effect.succeed({ messageExpiryInterval: seconds })
          : Effect.fail(new MqttPublishError({ topic, reason: "rejected", message: `messageExpirySeconds must be an integer from 1 to 4294967295, not ${seconds}` }))

    const publish = (topic: string, event: CloudEvent, opts: PublishOptions = {}) =>
      Effect.gen(function* () {
        yield* validateTopicName(topic)
        if (opts.responseTopic !== undefined) yield* validateTopicName(opts.responseTopic)
        const withCorrelation =
          opts.correlationId === undefined ? event : { ...event, extensions: { ...event.extensions, correlationid: opts.correlationId } }
        const encoded = yield* encode(withCorrelation, { maxPayloadBytes })
        const expiry = yield* expiryProperty(topic, opts.messageExpirySeconds)
        yield* send(topic, encoded.payload, {
          qos: opts.qos ?? 1,
          retain: opts.retain ?? false,
          properties: { ...encoded.properties, ...expiry, ...(opts.responseTopic !== undefined ? { responseTopic: opts.responseTopic } : {}) }
        })
      })

    const publishRaw = (topic: string, payload: Buffer, opts: PublishRawOptions = {}) =>
      Effect.gen(function* () {
        yield* validateTopicName(topic)
        const problem = opts.properties === undefined ? undefined : propertiesProblem(opts.properties)
        if (problem !== undefined) return yield* Effect.fail(new MqttPublishError({ topic, reason: "rejected", message: `not sent: ${problem}` }))
        yield* send(topic, payload, { qos: opts.qos ?? 1, retain: opts.retain ?? false, ...(opts.properties ? { properties: opts.properties } : {}) })
      })

    const sendSubscribe = (filter: string, qos: 0 | 1) =>
      Effect.async<void, MqttSubscribeError>((resume) => {
        client.subscribe(filter, { qos }, (error, granted) => {
          const refused = granted?.find((g) => g.qos >= 128)
          if (error || refused) resume(Effect.fail(new MqttSubscribeError({ filter, message: error?.message ?? `SUBACK reason code ${refused?.qos}` })))
          else resume(Effect.void)
        })
      }).pipe(
        Effect.timeoutFail({ duration: publishTimeout, onTimeout: () => new MqttSubscribeError({ filter, message: "no SUBACK in time" }) })
      )

    const sendUnsubscribe = (filter: string) =>
      Effect.async<void>((resume) => {
        if (live.isClosing()) return resume(Effect.void)
        client.unsubscribe(filter, () => resume(Effect.void))
      }).pipe(Effect.timeout(Duration.seconds(2)), Effect.ignore)

    const subscribe = (filter: string, opts: SubscribeOptions = {}) =>
      Effect.gen(function* () {
        yield* validateFilter(filter)
        const queue = yield* Effect.acquireRelease(Queue.unbounded<IncomingMessage>(), Queue.shutdown)
        // The route exists before SUBSCRIBE, so retained messages sent right after the SUBACK find it.
        yield* Effect.acquireRelease(
          Effect.sync(() => {
            const route = { filter, queue }
            routes.push(route)
            for (let i = 0; i < unrouted.length; ) {
              const message = unrouted[i]
              if (message && topicMatches(filter, message.topic)) {
                Queue.unsafeOffer(queue, message)
                unrouted.splice(i, 1)
              } else i++
            }
            return route
          }),
          (route) => Effect.sync(() => void routes.splice(routes.indexOf(route), 1))
        )
        yield* Effect.acquireRelease(sendSubscribe(filter, opts.qos ?? 1), () => (opts.keepInSession ? Effect.void : sendUnsubscribe(filter)))
        return Stream.fromQueue(queue)
      })

    const reply = (request: IncomingMessage, event: CloudEvent) =>
      Effect.gen(function* () {
        const responseTopic = request.responseTopic
        if (responseTopic === undefined) {
          return yield* Effect.logInfo("request has no response topic; reply not sent").pipe(
            Effect.annotateLogs({ topic: request.topic, type: event.type })
          )
        }
        yield* validateResponseTopic(responseTopic)
        const prepared = prepareReply(request, event)
        const encoded = yield* encode(prepared.event, { maxPayloadBytes, correlationData: prepared.correlationData })
        yield* send(responseTopic, encoded.payload, { qos: 1, retain: false, properties: encoded.properties })
      })

    return {
      clientId,
      status: SubscriptionRef.get(live.status),
      statusChanges: live.status.changes,
      sessions: live.sessions.changes,
      subscriptions: Effect.sync(() => routes.map((r) => r.filter)),
      publish,
      publishRaw,
      subscribe,
      reply
    } satisfies MqttConnectionService
  })

