import { Effect, Queue } from "effect"
import type { IPublishPacket } from "mqtt"
import { decode, type DecodeOptions, type PublishProperties } from "./Binary.js"
import type { IncomingMessage } from "./Incoming.js"
import { subscriptionIdFor, subscriptionIdsOf } from "./SubscriptionIds.js"
import { topicMatches } from "./Topics.js"

/**
 * Which subscription stream each received copy goes to: the live routes, the copies waiting for
 * their subscription, and the identifiers of subscriptions this process ended.
 */

export interface Route {
  readonly filter: string
  /** Its MQTT 5 subscription identifier: the broker tags each copy it sends for this subscription with it. */
  readonly id: number
  readonly queue: Queue.Queue<IncomingMessage>
}

export interface IncomingRoutes {
  readonly routes: Array<Route>
  readonly unrouted: Array<IncomingMessage>
  /** Identifiers of subscriptions this process ended with UNSUBSCRIBE: their late copies are duplicates. */
  readonly retired: Set<number>
  readonly receiveMaximum: number
  readonly decodeOptions: DecodeOptions
}

export const makeIncomingRoutes = (receiveMaximum: number, decodeOptions: DecodeOptions): IncomingRoutes => ({
  routes: [],
  unrouted: [],
  retired: new Set<number>(),
  receiveMaximum,
  decodeOptions
})

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

const toIncoming = (
  decodeOptions: DecodeOptions,
  topic: string,
  payload: Buffer,
  packet: IPublishPacket,
  ack: Effect.Effect<void>
): IncomingMessage => {
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
const routesFor = (routes: ReadonlyArray<Route>, topic: string, ids: ReadonlyArray<number>): ReadonlyArray<Route> => {
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
  if (found.length === 1) return Queue.offerUnsafe(found[0]!.queue, message)
  const ackFor = sharedAck(message.ack, found.length)
  for (const route of found) Queue.offerUnsafe(route.queue, { ...message, ack: ackFor() })
}

/** The client's message sink: each received copy to its streams, or to `unrouted` until its subscription exists. */
export const routeIncoming = (
  incoming: IncomingRoutes,
  topic: string,
  payload: Buffer,
  packet: IPublishPacket,
  ack: Effect.Effect<void>
) => {
  const { unrouted, retired } = incoming
  const ids = subscriptionIdsOf(packet.properties)
  const found = routesFor(incoming.routes, topic, ids)
  // Receive Maximum bounds only QoS 1 and 2. A QoS 0 flood is held to the same count and the
  // rest dropped, which QoS 0 (at most once) allows, before it is even decoded.
  if (packet.qos === 0 && found.some((route) => Queue.sizeUnsafe(route.queue) >= incoming.receiveMaximum)) return
  if (found.length === 0 && ids.length > 0 && ids.every((id) => retired.has(id))) {
    // A copy for a subscription we ended, sent before the broker saw the UNSUBSCRIBE: any other
    // matching subscription has a copy of its own. Acknowledged so it frees its in-flight slot.
    Effect.runSync(ack)
    return
  }
  const message = toIncoming(incoming.decodeOptions, topic, payload, packet, ack)
  if (found.length > 0) return deliver(found, message)
  if (unrouted.length >= MAX_UNROUTED) unrouted.shift()
  unrouted.push(message)
}

/** Adds the route of a new subscription and hands it the copies already waiting for it. */
export const addRoute = (incoming: IncomingRoutes, filter: string, queue: Queue.Queue<IncomingMessage>): Route => {
  const { routes, unrouted } = incoming
  const id = subscriptionIdFor(filter, (candidate) => routes.some((r) => r.id === candidate && r.filter !== filter))
  const route: Route = { filter, id, queue }
  routes.push(route)
  incoming.retired.delete(id)
  // Copies kept by the session for this subscription (its identifier), or without one.
  for (let i = 0; i < unrouted.length; ) {
    const message = unrouted[i]
    const ids = message ? subscriptionIdsOf(message.properties) : []
    if (message && topicMatches(filter, message.topic) && (ids.length === 0 || ids.includes(id))) {
      Queue.offerUnsafe(queue, message)
      unrouted.splice(i, 1)
    } else i++
  }
  return route
}

export const removeRoute = (incoming: IncomingRoutes, route: Route) => void incoming.routes.splice(incoming.routes.indexOf(route), 1)

/** Marks an ended subscription's identifier retired, unless another live route still holds it. */
export const retireRoute = (incoming: IncomingRoutes, route: Route) => {
  if (!incoming.routes.some((r) => r !== route && r.id === route.id)) incoming.retired.add(route.id)
}
