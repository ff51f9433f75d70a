import { Context, Duration, Effect, Result, Layer, type Scope, type Stream, SubscriptionRef } from "effect"
import { DEFAULT_MAX_PAYLOAD_BYTES } from "./Binary.js"
import type { CloudEvent } from "./CloudEvent.js"
import { type InvalidTopic, type MessageTooLarge, type MqttConnectError, MqttPublishError, type MqttSubscribeError } from "./Errors.js"
import type { IncomingMessage } from "./Incoming.js"
import { makeIncomingRoutes, type IncomingRoutes, routeIncoming } from "./IncomingRoutes.js"
import { type IntakeHealth, watchIntake } from "./IntakeWatch.js"
import { acquireClient, type LiveClient, type MqttSession, type MqttStatus } from "./MqttClient.js"
import { limitsProblem, mqttDefaults, type MqttOptions } from "./MqttOptions.js"
import { makePublishSender, type PublishSender, releaseSender, send, sendAll } from "./PubackWait.js"
import {
  type Prepared,
  preparePublish,
  prepareReplyTo,
  propertiesProblem,
  type PublishFailure,
  type PublishOptions,
  type PublishRawOptions
} from "./PublishPreparation.js"
import { subscribe, type SubscribeOptions } from "./Subscriptions.js"
import { uniqueClientId, validateClientId, validateTopicName } from "./Topics.js"

export type { PublishFailure, PublishOptions, PublishRawOptions } from "./PublishPreparation.js"
export type { SubscribeOptions } from "./Subscriptions.js"

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
  /**
   * Publishes an event in binary mode; with QoS 1 it completes on PUBACK. Every publish fails with
   * `MessageTooLarge`, sending nothing, when its packet is over the broker's Maximum Packet Size.
   */
  readonly publish: (topic: string, event: CloudEvent, options?: PublishOptions) => Effect.Effect<void, PublishFailure>
  /** Publishes bytes as they are, e.g. a zero-byte retained message that deletes the retained one. */
  readonly publishRaw: (topic: string, payload: Buffer, options?: PublishRawOptions) => Effect.Effect<void, InvalidTopic | MqttPublishError | MessageTooLarge>
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

export class MqttConnection extends Context.Service<MqttConnection, MqttConnectionService>()("@microdcs/cloudevents-mqtt/MqttConnection") {
  /** The service over one connection; the client ends when the layer is released. */
  static readonly layer = (options: MqttOptions): Layer.Layer<MqttConnection, MqttConnectError | InvalidTopic> =>
    Layer.effect(MqttConnection, makeMqttConnection(options))
}

const intakeUnwatched: IntakeHealth = { stalled: false, reconnects: 0 }

/** The dependencies of the connection's functions, built once by {@link makeMqttConnection}. */
interface ConnectionDeps {
  readonly options: MqttOptions
  readonly maxPayloadBytes: number
  readonly receiveMaximum: number
  readonly publishTimeout: Duration.Duration
  readonly live: LiveClient
  readonly incoming: IncomingRoutes
  readonly sender: PublishSender
}

const noResponseTopic = (request: IncomingMessage, event: CloudEvent) =>
  Effect.logInfo("request has no response topic; reply not sent").pipe(Effect.annotateLogs({ topic: request.topic, type: event.type }))

const publish = (deps: ConnectionDeps, topic: string, event: CloudEvent, opts: PublishOptions = {}): Effect.Effect<void, PublishFailure> =>
  Effect.suspend(() => {
    const prepared = preparePublish(deps.maxPayloadBytes, topic, event, opts)
    return Result.isFailure(prepared) ? Effect.fail(prepared.failure) : send(deps.sender, prepared.success)
  })

const publishRaw = (deps: ConnectionDeps, topic: string, payload: Buffer, opts: PublishRawOptions = {}) =>
  Effect.gen(function* () {
    yield* Effect.fromResult(validateTopicName(topic))
    const problem = opts.properties === undefined ? undefined : propertiesProblem(opts.properties)
    if (problem !== undefined) return yield* Effect.fail(new MqttPublishError({ topic, reason: "rejected", message: `not sent: ${problem}` }))
    yield* send(deps.sender, { topic, payload, options: { qos: opts.qos ?? 1, retain: opts.retain ?? false, ...(opts.properties ? { properties: opts.properties } : {}) } })
  })

const reply = (deps: ConnectionDeps, request: IncomingMessage, event: CloudEvent): Effect.Effect<void, PublishFailure> =>
  Effect.suspend(() => {
    const prepared = prepareReplyTo(deps.maxPayloadBytes, request, event)
    if (Result.isFailure(prepared)) return Effect.fail(prepared.failure)
    return prepared.success === undefined ? noResponseTopic(request, event) : send(deps.sender, prepared.success)
  })

const publishAll = (deps: ConnectionDeps, messages: ReadonlyArray<OutgoingMessage>): Effect.Effect<ReadonlyArray<PublishFailure | undefined>> =>
  Effect.suspend(() => {
    const outcomes: Array<PublishFailure | undefined> = messages.map(() => undefined)
    const batch: Array<Prepared> = []
    const places: Array<number> = []
    const skipped: Array<Effect.Effect<void>> = []
    messages.forEach((message, i) => {
      const prepared =
        message._tag === "Publish"
          ? preparePublish(deps.maxPayloadBytes, message.topic, message.event, message.options)
          : prepareReplyTo(deps.maxPayloadBytes, message.request, message.event)
      if (Result.isFailure(prepared)) outcomes[i] = prepared.failure
      else if (prepared.success !== undefined) {
        batch.push(prepared.success)
        places.push(i)
      } else if (message._tag === "Reply") skipped.push(noResponseTopic(message.request, message.event))
    })
    const sent =
      batch.length === 0
        ? Effect.succeed(outcomes)
        : Effect.map(sendAll(deps.sender, batch), (errors) => {
            errors.forEach((error, k) => (outcomes[places[k]!] = error))
            return outcomes
          })
    return skipped.length === 0 ? sent : Effect.andThen(Effect.all(skipped, { discard: true }), sent)
  })

/** The intake watch on its probe topic; a probe subscription the broker refuses leaves the intake unwatched (logged). */
const watchOwnIntake = (deps: ConnectionDeps, topic: string) =>
  Effect.gen(function* () {
    const { live, options } = deps
    yield* Effect.fromResult(validateTopicName(topic))
    const probes = yield* Effect.result(subscribe(deps, topic))
    if (Result.isFailure(probes)) {
      yield* Effect.logWarning("mqtt intake probe not subscribed; the intake is not watched").pipe(Effect.annotateLogs({ topic, error: probes.failure.message }))
      return yield* SubscriptionRef.make<IntakeHealth>(intakeUnwatched)
    }
    return yield* watchIntake({
      periodMs: options.intakeProbeMs ?? mqttDefaults.intakeProbeMs,
      receiveMaximum: deps.receiveMaximum,
      probes: probes.success,
      publishProbe: (payload) => publishRaw(deps, topic, payload, { qos: 1 }),
      connected: Effect.map(SubscriptionRef.get(live.status), (s) => s === "connected"),
      hasIntake: () => deps.incoming.routes.some((r) => r.filter !== topic),
      received: live.received,
      unacknowledged: live.unacknowledged,
      reconnect: live.reconnect
    })
  })

/** Connects and builds the dependencies; the sender's release runs before the client's own. */
const connectionDepsOf = (options: MqttOptions, clientId: string): Effect.Effect<ConnectionDeps, MqttConnectError, Scope.Scope> =>
  Effect.gen(function* () {
    const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES
    const receiveMaximum = options.receiveMaximum ?? mqttDefaults.receiveMaximum
    const publishTimeout = Duration.millis(options.publishTimeoutMs ?? mqttDefaults.publishTimeoutMs)
    const incoming = makeIncomingRoutes(receiveMaximum, { maxPayloadBytes, maxNestingDepth: options.maxNestingDepth })
    const live = yield* acquireClient(options, clientId, (topic, payload, packet, ack) => routeIncoming(incoming, topic, payload, packet, ack))
    const sender = makePublishSender(live, publishTimeout)
    // Runs before the client's own release: a publish still waiting for its PUBACK (the broker
    // gone, say) fails with `closed` instead of holding the release until its timeout.
    yield* Effect.addFinalizer(() => Effect.sync(() => releaseSender(sender)))
    return { options, maxPayloadBytes, receiveMaximum, publishTimeout, live, incoming, sender }
  })

export const makeMqttConnection = (options: MqttOptions): Effect.Effect<MqttConnectionService, MqttConnectError | InvalidTopic, Scope.Scope> =>
  Effect.gen(function* () {
    const clientId = yield* Effect.fromResult(
      options.clientId !== undefined ? validateClientId(options.clientId) : uniqueClientId(options.clientIdBase ?? mqttDefaults.clientIdBase)
    )
    // A caller's bug, not a condition to handle: mqtt.js would silently announce other limits.
    const limits = limitsProblem(options)
    if (limits !== undefined) return yield* Effect.die(new Error(limits))
    const deps = yield* connectionDepsOf(options, clientId)
    const { live, incoming } = deps
    const probeTopic = options.intakeProbeTopic
    const intake = probeTopic === undefined ? yield* SubscriptionRef.make<IntakeHealth>(intakeUnwatched) : yield* watchOwnIntake(deps, probeTopic)
    return {
      clientId,
      status: SubscriptionRef.get(live.status),
      statusChanges: SubscriptionRef.changes(live.status),
      sessions: SubscriptionRef.changes(live.sessions),
      subscriptions: Effect.sync(() => incoming.routes.flatMap((r) => (r.filter === probeTopic ? [] : [r.filter]))),
      intake: SubscriptionRef.get(intake),
      publish: (topic, event, opts) => publish(deps, topic, event, opts),
      publishRaw: (topic, payload, opts) => publishRaw(deps, topic, payload, opts),
      subscribe: (filter, opts) => subscribe(deps, filter, opts),
      reply: (request, event) => reply(deps, request, event),
      publishAll: (messages) => publishAll(deps, messages)
    } satisfies MqttConnectionService
  })
