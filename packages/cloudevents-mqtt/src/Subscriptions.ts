import { Duration, Effect, Queue, type Scope, Stream } from "effect"
import { type InvalidTopic, MqttSubscribeError } from "./Errors.js"
import type { IncomingMessage } from "./Incoming.js"
import { addRoute, type IncomingRoutes, removeRoute, retireRoute, type Route } from "./IncomingRoutes.js"
import type { LiveClient } from "./MqttClient.js"
import { validateFilter } from "./Topics.js"

/** A subscription of the connection: its route, its SUBSCRIBE, and its UNSUBSCRIBE when its scope closes. */

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

export interface SubscriptionDeps {
  readonly live: LiveClient
  readonly incoming: IncomingRoutes
  /** How long a SUBACK may take, as a PUBACK may. */
  readonly publishTimeout: Duration.Duration
}

// mqtt.js keeps the properties for its re-subscribe after a reconnect, identifier included.
// It is an acquire, which runs uninterruptibly: `interruptible` lets the timeout end the wait.
const sendSubscribe = (deps: SubscriptionDeps, filter: string, qos: 0 | 1, subscriptionIdentifier: number) =>
  Effect.interruptible(
    Effect.callback<void, MqttSubscribeError>((resume) => {
      deps.live.client.subscribe(filter, { qos, properties: { subscriptionIdentifier } }, (error, granted) => {
        const refused = granted?.find((g) => g.qos >= 128)
        if (error || refused) resume(Effect.fail(new MqttSubscribeError({ filter, message: error?.message ?? `SUBACK reason code ${refused?.qos}` })))
        else resume(Effect.void)
      })
    })
  ).pipe(
    Effect.timeoutOrElse({ duration: deps.publishTimeout, orElse: () => Effect.fail(new MqttSubscribeError({ filter, message: "no SUBACK in time" })) })
  )

// Disconnected, mqtt.js queues the UNSUBSCRIBE and calls back only at the next connection attempt
// (up to `reconnectMaxMs` away); it forgets the filter at once (no re-subscribe), so there is
// nothing to wait for. This runs in a release, which is uninterruptible: without
// `interruptible` the timeout could not end the wait.
const sendUnsubscribe = (live: LiveClient, filter: string) =>
  Effect.interruptible(
    Effect.callback<void>((resume) => {
      if (live.isClosing()) return resume(Effect.void)
      const connected = live.client.connected
      live.client.unsubscribe(filter, () => resume(Effect.void))
      if (!connected) resume(Effect.void)
    })
  ).pipe(Effect.timeout(Duration.seconds(2)), Effect.ignore)

const unsubscribeUnlessKept = (deps: SubscriptionDeps, route: Route, opts: SubscribeOptions) =>
  opts.keepInSession
    ? Effect.void
    : Effect.andThen(
        Effect.sync(() => retireRoute(deps.incoming, route)),
        sendUnsubscribe(deps.live, route.filter)
      )

export const subscribe = (
  deps: SubscriptionDeps,
  filter: string,
  opts: SubscribeOptions = {}
): Effect.Effect<Stream.Stream<IncomingMessage>, InvalidTopic | MqttSubscribeError, Scope.Scope> =>
  Effect.gen(function* () {
    yield* Effect.fromResult(validateFilter(filter))
    const queue = yield* Effect.acquireRelease(Queue.unbounded<IncomingMessage>(), Queue.shutdown)
    // The route exists before SUBSCRIBE, so retained messages sent right after the SUBACK find it.
    const route = yield* Effect.acquireRelease(
      Effect.sync(() => addRoute(deps.incoming, filter, queue)),
      (route) => Effect.sync(() => removeRoute(deps.incoming, route))
    )
    yield* Effect.acquireRelease(sendSubscribe(deps, filter, opts.qos ?? 1, route.id), () => unsubscribeUnlessKept(deps, route, opts))
    return Stream.fromQueue(queue)
  })
