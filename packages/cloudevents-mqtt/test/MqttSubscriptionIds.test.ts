import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Fiber, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { randomPrefix } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import { type IncomingMessage, makeCloudEvent, makeMqttConnection, type MqttOptions } from "@microdcs/cloudevents-mqtt"
import { MAX_SUBSCRIPTION_ID, subscriptionIdFor, subscriptionIdsOf } from "../src/SubscriptionIds.js"

const broker = mosquittoForFile()

const connect = (options: Partial<MqttOptions> = {}) =>
  makeMqttConnection({ url: broker.url, clientIdBase: "subid", reconnectMinMs: 100, connectTimeoutMs: 5000, ...options })

const take = (stream: Stream.Stream<IncomingMessage>, n: number) =>
  stream.pipe(Stream.take(n), Stream.runCollect, Effect.timeout("5 seconds"))

const idOf = (message: IncomingMessage | undefined) => (message ? Result.getOrThrow(message.decoded).id : undefined)

const event = (n: number) => makeCloudEvent({ source: "urn:test", type: "com.example.tick.v1", data: { n } })

/**
 * Whether `stream` delivers nothing more once `marker` (published after) has arrived on it: the
 * broker sends in order per subscription, so a stray copy would have come before the marker.
 */
const nothingBefore = (stream: Stream.Stream<IncomingMessage>, markerId: string) =>
  stream.pipe(
    Stream.takeUntil((m) => idOf(m) === markerId),
    Stream.tap((m) => m.ack),
    Stream.runCollect,
    Effect.map((all) => all.map(idOf)),
    Effect.timeout("5 seconds")
  )

describe("overlapping subscriptions (MQTT 5 subscription identifiers)", () => {
  it("derives a stable identifier in range from the filter, moving on past one already taken", () => {
    const none = () => false
    const id = subscriptionIdFor("p/+/events", none)
    expect(id).toBe(subscriptionIdFor("p/+/events", none))
    expect(id).toBeGreaterThanOrEqual(1)
    expect(id).toBeLessThanOrEqual(MAX_SUBSCRIPTION_ID)
    expect(subscriptionIdFor("$share/g/p/+/events", none)).not.toBe(id)
    expect(subscriptionIdFor("p/+/events", (candidate) => candidate === id)).toBe((id % MAX_SUBSCRIPTION_ID) + 1)
    expect(subscriptionIdsOf({ subscriptionIdentifier: 7 })).toEqual([7])
    expect(subscriptionIdsOf({ subscriptionIdentifier: [7, 9] })).toEqual([7, 9])
    expect(subscriptionIdsOf({})).toEqual([])
    expect(subscriptionIdsOf(undefined)).toEqual([])
  })

  it.live("two overlapping filters on one connection: one publish, each stream gets exactly one copy", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const conn = yield* connect()
      const station = yield* conn.subscribe(`${prefix}/station/+/events`)
      const all = yield* conn.subscribe(`${prefix}/+/+/events`)
      const sent = event(1)
      yield* conn.publish(`${prefix}/station/line-1/events`, sent)
      // A marker only the wide filter matches, then one for both: each stream ends at its marker.
      const wideOnly = event(2)
      yield* conn.publish(`${prefix}/other/line-1/events`, wideOnly)
      const marker = event(3)
      yield* conn.publish(`${prefix}/station/line-1/events`, marker)
      const fromStation = yield* Effect.forkChild(nothingBefore(station, marker.id))
      const fromAll = yield* Effect.forkChild(nothingBefore(all, marker.id))
      expect(yield* Fiber.join(fromStation)).toEqual([sent.id, marker.id])
      expect(yield* Fiber.join(fromAll)).toEqual([sent.id, wideOnly.id, marker.id])
    }).pipe(Effect.scoped)
  )

  it.live("a single filter is unchanged; a filter subscribed twice is one subscription, its first stream gets it", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const conn = yield* connect()
      const first = yield* conn.subscribe(`${prefix}/+/events`)
      const sent = event(1)
      yield* conn.publish(`${prefix}/a/events`, sent)
      const [message] = yield* take(first, 1)
      expect(idOf(message)).toBe(sent.id)
      expect(message?.properties.subscriptionIdentifier).toBeDefined()
      yield* message!.ack

      const second = yield* conn.subscribe(`${prefix}/+/events`)
      const again = event(2)
      yield* conn.publish(`${prefix}/a/events`, again)
      const [next] = yield* take(first, 1)
      expect(idOf(next)).toBe(again.id)
      yield* next!.ack
      expect(second).toBeDefined()
    }).pipe(Effect.scoped)
  )

  it.live("ending one of two overlapping subscriptions leaves the other its copies, and the late ones are not held", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const conn = yield* connect()
      const wide = yield* conn.subscribe(`${prefix}/#`)
      yield* Effect.scoped(conn.subscribe(`${prefix}/x/events`))
      expect(yield* conn.subscriptions).toEqual([`${prefix}/#`])
      const sent = event(1)
      yield* conn.publish(`${prefix}/x/events`, sent)
      const marker = event(2)
      yield* conn.publish(`${prefix}/x/events`, marker)
      expect(yield* nothingBefore(wide, marker.id)).toEqual([sent.id, marker.id])
    }).pipe(Effect.scoped)
  )

  it.live("a persistent session's kept copies reach their own streams after a restart, subscribed in another order", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const session: Partial<MqttOptions> = { clientId: `subid-${randomUUID()}`, clean: false, sessionExpirySeconds: 60 }
      const narrow = `${prefix}/station/+/events`
      const wide = `${prefix}/+/+/events`
      const publisher = yield* connect()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const conn = yield* connect(session)
          yield* conn.subscribe(narrow, { keepInSession: true })
          yield* conn.subscribe(wide, { keepInSession: true })
        })
      )
      // Published while the subscriber is away: the broker keeps one copy per subscription.
      const sent = event(1)
      yield* publisher.publish(`${prefix}/station/line-1/events`, sent)

      const conn = yield* connect(session)
      const fromWide = yield* conn.subscribe(wide, { keepInSession: true })
      const fromNarrow = yield* conn.subscribe(narrow, { keepInSession: true })
      const marker = event(2)
      yield* publisher.publish(`${prefix}/station/line-1/events`, marker)
      const wideIds = yield* Effect.forkChild(nothingBefore(fromWide, marker.id))
      const narrowIds = yield* Effect.forkChild(nothingBefore(fromNarrow, marker.id))
      expect(yield* Fiber.join(wideIds)).toEqual([sent.id, marker.id])
      expect(yield* Fiber.join(narrowIds)).toEqual([sent.id, marker.id])
    }).pipe(Effect.scoped)
  )

  it.live("a shared subscription beside an overlapping plain one: each gets its copy", () =>
    Effect.gen(function* () {
      const prefix = randomPrefix()
      const conn = yield* connect()
      const shared = yield* conn.subscribe(`$share/g/${prefix}/+/commands`)
      const plain = yield* conn.subscribe(`${prefix}/+/commands`)
      const sent = event(1)
      yield* conn.publish(`${prefix}/a/commands`, sent)
      const marker = event(2)
      yield* conn.publish(`${prefix}/a/commands`, marker)
      const a = yield* Effect.forkChild(nothingBefore(shared, marker.id))
      const b = yield* Effect.forkChild(nothingBefore(plain, marker.id))
      expect(yield* Fiber.join(a)).toEqual([sent.id, marker.id])
      expect(yield* Fiber.join(b)).toEqual([sent.id, marker.id])
    }).pipe(Effect.scoped)
  )
})
