import { Context, Duration, Effect, Either, Layer, Option, Queue, type Scope, Stream, SubscriptionRef } from "effect"
import type { IClientPublishOptions, IPublishPacket, MqttClient } from "mqtt"
import { decode, DEFAULT_MAX_PAYLOAD_BYTES, encode, type PublishProperties } from "./Binary.js"
import type { CloudEvent } from "./CloudEvent.js"
import { type EncodeError, type InvalidTopic, type MqttConnectError, MqttPublishError, MqttSubscribeError } from "./Errors.js"
import type { IncomingMessage } from "./Incoming.js"
import { type IntakeHealth, watchIntake } from "./IntakeWatch.js"
import { acquireClient, type MqttSession, type MqttStatus } from "./MqttClient.js"
import { limitsProblem, mqttDefaults, type MqttOptions } from "./MqttOptions.js"
import { mqttStringProblem, toMqttString } from "./MqttString.js"
import { prepareReply } from "./Reply.js"
import { subscriptionIdFor, subscriptionIdsOf } from "./SubscriptionIds.js"
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

/** One message of {@link MqttConnectionService.publishAll}: an event to a topic, or a reply to a request. */
export type OutgoingMessage =
  | { readonly _tag: "Publish"; readonly topic: string; readonly event: CloudEvent; readonly options?: PublishOptions | undefined }
  | { readonly _tag: "Reply"; readonly request: IncomingMessage; readonly event: CloudEvent }

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
  /** The filters with a live subscription stream (not the intake probe's). */
  readonly subscriptions: Effect.Effect<ReadonlyArray<string>>
  /**
   * Whether the broker still delivers to this connection, as the intake watch last saw it
   * (`intakeProbeTopic`; without it never stalled). A stall is ended by a reconnect.
   */
  readonly intake: Effect.Effect<IntakeHealth>
  /** Publishes an event in binary mode; with QoS 1 it completes on PUBACK. */
  readonly publish: (topic: string, event: CloudEvent, options?: PublishOptions) => Effect.Effect<void, PublishFailure>
  /** Publishes bytes as they are, e.g. a zero-byte retained message that deletes the retained one. */
  readonly publishRaw: (topic: string, payload: Buffer, options?: PublishRawOptions) => Effect.Effect<void, InvalidTopic | MqttPublishError>
  /**
   * Subscribes (done when the SUBACK arrived) and returns the messages matching the filter; the
   * subscription ends with the scope. Each subscription has its own MQTT 5 subscription
   * identifier, so a message matching several live filters reaches each of their streams once.
   * Subscribing one filter twice on a connection is one broker subscription: its first stream gets the messages.
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
  /**
   * Sends several messages (each like `publish` or `reply` would) in order and completes once
   * every one is settled: one outcome per message, `undefined` for one that was sent (or a reply
   * with no response topic, which is logged and skipped as `reply` does). They are handed to the
   * client together, so they leave in one socket write and the caller waits for their PUBACKs
   * once instead of one after the other. A message that fails does not stop the others.
   */
  readonly publishAll: (messages: ReadonlyArray<OutgoingMessage>) => Effect.Effect<ReadonlyArray<PublishFailure | undefined>>
}

export class MqttConnection extends Context.Tag("@microdcs/cloudevents-mqtt/MqttConnection")<MqttConnection, MqttConnectionService>() {
  /** The service over one connection; the client ends when the layer is released. */
  static readonly layer = (options: MqttOptions): Layer.Layer<MqttConnection, MqttConnectError | InvalidTopic> =>
    Layer.scoped(MqttConnection, makeMqttConnection(options))
}

interface Route {
  readonly filter: string
  /** Its MQTT 5 subscription identifier: the broker tags each copy it sends for this subscription with it. */
  readonly id: number
  readonly queue: Queue.Queue<IncomingMessage>
}

/** One ack for several streams (a single copy for several subscriptions): the PUBACK goes when all have acked. */
const sharedAck = (ack: Effect.Effect<void>, holders: number): (() => Effect.Effect<void>) => {
  let left = holders
  return () => {
    let done = false
    return Effect.suspend(() => {
      if (done) return Effect.void
      done = true
      return --left === 0 ? ack : Effect.void
    })
  }
}

/**
 * Messages that arrive before their subscription stream exists: a resumed session redelivers
 * right after CONNACK, before the consumer has subscribed again. They wait here, unacknowledged;
 * past this many the oldest is dropped (unacknowledged, so the broker sends it again next session).
 */
const MAX_UNROUTED = 1000

const intakeUnwatched: IntakeHealth = { stalled: false, reconnects: 0 }

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

/** A message ready for the client: checked and encoded. */
interface Prepared {
  readonly topic: string
  readonly payload: Buffer
  readonly options: IClientPublishOptions
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
    // Identifiers of subscriptions this process ended with UNSUBSCRIBE: their late copies are duplicates.
    const retired = new Set<number>()
    // Publishes waiting for their PUBACK: failed with `closed` when the connection is released.
    const pending = new Set<() => void>()
    let released = false

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

    /**
     * Where a copy goes. With subscription identifiers: to the live routes holding them (a filter that
     * does not match the topic is an identifier of another process's session, and is ignored).
     * Without any: to the first route whose filter matches, as before identifiers (a session kept
     * from an older version). An identifier no live route holds waits in `unrouted` for its
     * subscription (a resumed session delivering before the re-subscribe), unless it was retired.
     */
    const routesFor = (topic: string, ids: ReadonlyArray<number>): ReadonlyArray<Route> => {
      if (ids.length === 0) {
        const route = routes.find((r) => topicMatches(r.filter, topic))
        return route ? [route] : []
      }
      const found: Array<Route> = []
      for (const id of ids) {
        const route = routes.find((r) => r.id === id && topicMatches(r.filter, topic))
        if (route && !found.includes(route)) found.push(route)
      }
      return found
    }

    const deliver = (found: ReadonlyArray<Route>, message: IncomingMessage) => {
      if (found.length === 1) return Queue.unsafeOffer(found[0]!.queue, message)
      const ackFor = sharedAck(message.ack, found.length)
      for (const route of found) Queue.unsafeOffer(route.queue, { ...message, ack: ackFor() })
    }

    const sink = (topic: string, payload: Buffer, packet: IPublishPacket, ack: Effect.Effect<void>) => {
      const ids = subscriptionIdsOf(packet.properties)
      const found = routesFor(topic, ids)
      // Receive Maximum bounds only QoS 1 and 2. A QoS 0 flood is held to the same count and the
      // rest dropped, which QoS 0 (at most once) allows, before it is even decoded.
      if (packet.qos === 0 && found.some((route) => Option.getOrElse(route.queue.unsafeSize(), () => 0) >= receiveMaximum)) return
      if (found.length === 0 && ids.length > 0 && ids.every((id) => retired.has(id))) {
        // A copy for a subscription we ended, sent before the broker saw the UNSUBSCRIBE: any other
        // matching subscription has a copy of its own. Acknowledged so it frees its in-flight slot.
        Effect.runSync(ack)
        return
      }
      const message = toIncoming(topic, payload, packet, ack)
      if (found.length > 0) return deliver(found, message)
      if (unrouted.length >= MAX_UNROUTED) unrouted.shift()
      unrouted.push(message)
    }

    const live = yield* acquireClient(options, clientId, sink)
    const client: MqttClient = live.client
    // Runs before the client's own release: a publish still waiting for its PUBACK (the broker
    // gone, say) fails with `closed` instead of holding the release until its timeout.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        released = true
        for (const fail of [...pending]) fail()
        pending.clear()
      })
    )

    // The PUBACK timeout is a timer inside the one async step, not `Effect.timeoutFail`: that
    // races a second fiber on every publish, which cost more than the publish itself. A batch
    // shares the step and the timer: the messages go out together and are waited for together.
    const sendAll = (batch: ReadonlyArray<Prepared>): Effect.Effect<ReadonlyArray<MqttPublishError | undefined>> =>
      Effect.async<ReadonlyArray<MqttPublishError | undefined>>((resume) => {
        const outcomes: Array<MqttPublishError | undefined> = batch.map(() => undefined)
        if (released || live.isClosing()) {
          return resume(Effect.succeed(batch.map(({ topic }) => new MqttPublishError({ topic, reason: "closed", message: "connection is closing" }))))
        }
        const settledAt = batch.map(() => false)
        let open = batch.length
        let finished = false
        const settle = (i: number, error: MqttPublishError | undefined) => {
          if (finished || settledAt[i]) return
          settledAt[i] = true
          outcomes[i] = error
          if (--open > 0) return
          finished = true
          clearTimeout(timer)
          pending.delete(onClose)
          resume(Effect.succeed(outcomes))
        }
        const unsettled = (error: (topic: string) => MqttPublishError) => {
          for (let i = 0; i < batch.length; i++) if (!settledAt[i]) settle(i, error(batch[i]!.topic))
        }
        const timer = setTimeout(
          () => unsettled((topic) => new MqttPublishError({ topic, reason: "timeout", message: `no PUBACK within ${Duration.format(publishTimeout)}` })),
          Duration.toMillis(publishTimeout)
        )
        const onClose = () => unsettled((topic) => new MqttPublishError({ topic, reason: "closed", message: "connection closed before the PUBACK" }))
        pending.add(onClose)
        batch.forEach(({ topic, payload, options: publishOptions }, i) =>
          client.publish(topic, payload, publishOptions, (error) =>
            settle(
              i,
              error
                ? new MqttPublishError({ topic, reason: live.isClosing() ? "closed" : "rejected", message: error.message, reasonCode: reasonCodeOf(error) })
                : undefined
            )
          )
        )
        return Effect.sync(() => {
          finished = true
          clearTimeout(timer)
          pending.delete(onClose)
        })
      })

    const send = (prepared: Prepared): Effect.Effect<void, MqttPublishError> =>
      Effect.flatMap(sendAll([prepared]), ([error]) => (error === undefined ? Effect.void : Effect.fail(error)))

    const expiryProperty = (topic: string, seconds: number | undefined): Either.Either<{ messageExpiryInterval?: number }, MqttPublishError> =>
      seconds === undefined
        ? Either.right({})
        : Number.isInteger(seconds) && seconds > 0 && seconds <= 0xffffffff
          ? Either.right({ messageExpiryInterval: seconds })
          : Either.left(new MqttPublishError({ topic, reason: "rejected", message: `messageExpirySeconds must be an integer from 1 to 4294967295, not ${seconds}` }))

    // Both run for every message sent: plain code with early returns, no generator per call.

    /** A publish checked and encoded, synchronously: nothing has been sent yet. */
    const preparePublish = (topic: string, event: CloudEvent, opts: PublishOptions = {}): Either.Either<Prepared, PublishFailure> => {
      const topicChecked = validateTopicName(topic)
      if (Either.isLeft(topicChecked)) return Either.left(topicChecked.left)
      if (opts.responseTopic !== undefined) {
        const responseChecked = validateTopicName(opts.responseTopic)
        if (Either.isLeft(responseChecked)) return Either.left(responseChecked.left)
      }
      const withCorrelation =
        opts.correlationId === undefined ? event : { ...event, extensions: { ...event.extensions, correlationid: opts.correlationId } }
      const encoded = encode(withCorrelation, { maxPayloadBytes })
      if (Either.isLeft(encoded)) return Either.left(encoded.left)
      const expiry = expiryProperty(topic, opts.messageExpirySeconds)
      if (Either.isLeft(expiry)) return Either.left(expiry.left)
      return Either.right({
        topic,
        payload: encoded.right.payload,
        options: {
          qos: opts.qos ?? 1,
          retain: opts.retain ?? false,
          properties: { ...encoded.right.properties, ...expiry.right, ...(opts.responseTopic !== undefined ? { responseTopic: opts.responseTopic } : {}) }
        }
      })
    }

    /** A reply checked and encoded; `undefined` when the request has no response topic. */
    const prepareReplyTo = (request: IncomingMessage, event: CloudEvent): Either.Either<Prepared | undefined, PublishFailure> => {
      const responseTopic = request.responseTopic
      if (responseTopic === undefined) return Either.right(undefined)
      const checked = validateResponseTopic(responseTopic)
      if (Either.isLeft(checked)) return Either.left(checked.left)
      const prepared = prepareReply(request, event)
      const encoded = encode(prepared.event, { maxPayloadBytes, correlationData: prepared.correlationData })
      if (Either.isLeft(encoded)) return Either.left(encoded.left)
      return Either.right({ topic: responseTopic, payload: encoded.right.payload, options: { qos: 1, retain: false, properties: encoded.right.properties } })
    }

    const noResponseTopic = (request: IncomingMessage, event: CloudEvent) =>
      Effect.logInfo("request has no response topic; reply not sent").pipe(Effect.annotateLogs({ topic: request.topic, type: event.type }))

    const publish = (topic: string, event: CloudEvent, opts: PublishOptions = {}) =>
      Effect.flatMap(Effect.suspend(() => preparePublish(topic, event, opts)), send)

    const publishRaw = (topic: string, payload: Buffer, opts: PublishRawOptions = {}) =>
      Effect.gen(function* () {
        yield* validateTopicName(topic)
        const problem = opts.properties === undefined ? undefined : propertiesProblem(opts.properties)
        if (problem !== undefined) return yield* Effect.fail(new MqttPublishError({ topic, reason: "rejected", message: `not sent: ${problem}` }))
        yield* send({ topic, payload, options: { qos: opts.qos ?? 1, retain: opts.retain ?? false, ...(opts.properties ? { properties: opts.properties } : {}) } })
      })

    // mqtt.js keeps the properties for its re-subscribe after a reconnect, identifier included.
    // It is an acquire, which runs uninterruptibly: `interruptible` lets the timeout end the wait.
    const sendSubscribe = (filter: string, qos: 0 | 1, subscriptionIdentifier: number) =>
      Effect.interruptible(
        Effect.async<void, MqttSubscribeError>((resume) => {
          client.subscribe(filter, { qos, properties: { subscriptionIdentifier } }, (error, granted) => {
            const refused = granted?.find((g) => g.qos >= 128)
            if (error || refused) resume(Effect.fail(new MqttSubscribeError({ filter, message: error?.message ?? `SUBACK reason code ${refused?.qos}` })))
            else resume(Effect.void)
          })
        })
      ).pipe(
        Effect.timeoutFail({ duration: publishTimeout, onTimeout: () => new MqttSubscribeError({ filter, message: "no SUBACK in time" }) })
      )

    // Disconnected, mqtt.js queues the UNSUBSCRIBE and calls back only at the next connection attempt
    // (up to `reconnectMaxMs` away); it forgets the filter at once (no re-subscribe), so there is
    // nothing to wait for. This runs in a release, which is uninterruptible: without
    // `interruptible` the timeout could not end the wait.
    const sendUnsubscribe = (filter: string) =>
      Effect.interruptible(
        Effect.async<void>((resume) => {
          if (live.isClosing()) return resume(Effect.void)
          const connected = client.connected
          client.unsubscribe(filter, () => resume(Effect.void))
          if (!connected) resume(Effect.void)
        })
      ).pipe(Effect.timeout(Duration.seconds(2)), Effect.ignore)

    const subscribe = (filter: string, opts: SubscribeOptions = {}) =>
      Effect.gen(function* () {
        yield* validateFilter(filter)
        const queue = yield* Effect.acquireRelease(Queue.unbounded<IncomingMessage>(), Queue.shutdown)
        // The route exists before SUBSCRIBE, so retained messages sent right after the SUBACK find it.
        const route = yield* Effect.acquireRelease(
          Effect.sync(() => {
            const id = subscriptionIdFor(filter, (candidate) => routes.some((r) => r.id === candidate && r.filter !== filter))
            const route: Route = { filter, id, queue }
            routes.push(route)
            retired.delete(id)
            // Copies kept by the session for this subscription (its identifier), or without one.
            for (let i = 0; i < unrouted.length; ) {
              const message = unrouted[i]
              const ids = message ? subscriptionIdsOf(message.properties) : []
              if (message && topicMatches(filter, message.topic) && (ids.length === 0 || ids.includes(id))) {
                Queue.unsafeOffer(queue, message)
                unrouted.splice(i, 1)
              } else i++
            }
            return route
          }),
          (route) => Effect.sync(() => void routes.splice(routes.indexOf(route), 1))
        )
        yield* Effect.acquireRelease(sendSubscribe(filter, opts.qos ?? 1, route.id), () =>
          opts.keepInSession
            ? Effect.void
            : Effect.zipRight(
                Effect.sync(() => {
                  if (!routes.some((r) => r !== route && r.id === route.id)) retired.add(route.id)
                }),
                sendUnsubscribe(filter)
              )
        )
        return Stream.fromQueue(queue)
      })

    /** The intake watch on its probe topic; a probe subscription the broker refuses leaves the intake unwatched (logged). */
    const watchOwnIntake = (topic: string) =>
      Effect.gen(function* () {
        yield* validateTopicName(topic)
        const probes = yield* Effect.either(subscribe(topic))
        if (Either.isLeft(probes)) {
          yield* Effect.logWarning("mqtt intake probe not subscribed; the intake is not watched").pipe(Effect.annotateLogs({ topic, error: probes.left.message }))
          return yield* SubscriptionRef.make<IntakeHealth>(intakeUnwatched)
        }
        return yield* watchIntake({
          periodMs: options.intakeProbeMs ?? mqttDefaults.intakeProbeMs,
          receiveMaximum,
          probes: probes.right,
          publishProbe: (payload) => publishRaw(topic, payload, { qos: 1 }),
          connected: Effect.map(SubscriptionRef.get(live.status), (s) => s === "connected"),
          hasIntake: () => routes.some((r) => r.filter !== topic),
          received: live.received,
          unacknowledged: live.unacknowledged,
          reconnect: live.reconnect
        })
      })

    const reply = (request: IncomingMessage, event: CloudEvent): Effect.Effect<void, PublishFailure> =>
      Effect.suspend(() => {
        const prepared = prepareReplyTo(request, event)
        if (Either.isLeft(prepared)) return Effect.fail(prepared.left)
        return prepared.right === undefined ? noResponseTopic(request, event) : send(prepared.right)
      })

    const publishAll = (messages: ReadonlyArray<OutgoingMessage>): Effect.Effect<ReadonlyArray<PublishFailure | undefined>> =>
      Effect.suspend(() => {
        const outcomes: Array<PublishFailure | undefined> = messages.map(() => undefined)
        const batch: Array<Prepared> = []
        const places: Array<number> = []
        const skipped: Array<Effect.Effect<void>> = []
        messages.forEach((message, i) => {
          const prepared = message._tag === "Publish" ? preparePublish(message.topic, message.event, message.options) : prepareReplyTo(message.request, message.event)
          if (Either.isLeft(prepared)) outcomes[i] = prepared.left
          else if (prepared.right !== undefined) {
            batch.push(prepared.right)
            places.push(i)
          } else if (message._tag === "Reply") skipped.push(noResponseTopic(message.request, message.event))
        })
        const sent =
          batch.length === 0
            ? Effect.succeed(outcomes)
            : Effect.map(sendAll(batch), (errors) => {
                errors.forEach((error, k) => (outcomes[places[k]!] = error))
                return outcomes
              })
        return skipped.length === 0 ? sent : Effect.zipRight(Effect.all(skipped, { discard: true }), sent)
      })

    const probeTopic = options.intakeProbeTopic
    const intake = probeTopic === undefined ? yield* SubscriptionRef.make<IntakeHealth>(intakeUnwatched) : yield* watchOwnIntake(probeTopic)

    return {
      clientId,
      status: SubscriptionRef.get(live.status),
      statusChanges: live.status.changes,
      sessions: live.sessions.changes,
      subscriptions: Effect.sync(() => routes.flatMap((r) => (r.filter === probeTopic ? [] : [r.filter]))),
      intake: SubscriptionRef.get(intake),
      publish,
      publishRaw,
      subscribe,
      reply,
      publishAll
    } satisfies MqttConnectionService
  })

