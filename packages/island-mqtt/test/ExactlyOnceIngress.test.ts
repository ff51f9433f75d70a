import { randomUUID } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Layer, Stream } from "effect"
import { makeMqttConnection } from "@microdcs/cloudevents-mqtt"
import { MethodEventTypes, ReturnStatus } from "@microdcs/job-state"
import { ChangeStream, DedupeStore } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import { eventually, ingressLayer, jobOrderState, makeMes, MES_SOURCE, SCOPE, startInstance, storeFor } from "./Kit.js"

/**
 * The ingress's exactly-once rules where another holder is involved: a request
 * whose dedupe claim a crashed holder still holds is held unacknowledged and processed once that
 * lease ends; a duplicate of a processed request gets the first reply again.
 */

const broker = mosquittoForFile()

type IngressSettings = Parameters<typeof ingressLayer>[2]

const island = (prefix: string, settings: IngressSettings = {}) => ingressLayer(broker.url, prefix, settings).pipe(Layer.provide(storeFor(prefix)))

const persistentSession = () => ({ clientId: `island-${randomUUID().slice(0, 8)}`, clean: false, sessionExpirySeconds: 60 })

const jobOrder = (id: string) => ({ JobOrder: { JobOrderID: id, Priority: 1 } })

/** A holder that claimed the event and then crashed: it never marks it done nor releases it. */
const crashedHolderClaims = (id: string, leaseMs: number) =>
  Effect.flatMap(DedupeStore, (dedupe) => dedupe.claim(MES_SOURCE, id, `crashed-${randomUUID()}`, leaseMs))

/** Counts the worker's `held` outcomes, so a test knows a message was put aside. */
const heldCounter = () => {
  const counts = { held: 0 }
  return { counts, onOutcome: (_type: string, outcome: string) => void (outcome === "held" && counts.held++) }
}

/** How many times `id` was written with the change word `change`. */
const changesOf = (id: string, change: string) =>
  Effect.flatMap(ChangeStream, (changes) => changes.read(SCOPE, { after: "0", count: 1000 })).pipe(
    Effect.map((page) => page.entries.filter((e) => e.id === id && e.change === change).length)
  )

describe("JobControlIngress exactly once", () => {
  it.live("a request whose claim a crashed holder still holds is held, not answered, then processed once that lease ends; other requests pass meanwhile", () => {
    const prefix = randomPrefix("eo")
    const held = heldCounter()
    return Effect.gen(function* () {
      // One slot only: a held message that kept it would stall every other request.
      yield* startInstance(island(prefix, { ingress: { concurrency: 1, onOutcome: held.onOutcome } }))
      const mes = yield* makeMes(broker.url, prefix)
      const request = mes.request(MethodEventTypes.Store, jobOrder("jo-orphan"))
      const leaseEnds = Date.now() + 2_500
      yield* crashedHolderClaims(request.id, 2_500)
      const correlationId = yield* mes.send(request)
      yield* eventually(Effect.sync(() => (held.counts.held > 0 ? true : undefined)))
      expect(mes.repliesTo(correlationId)).toHaveLength(0)

      // Another request is processed while the first is held.
      expect((yield* mes.call(MethodEventTypes.Store, jobOrder("jo-other"))).data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })
      expect(yield* jobOrderState("jo-orphan")).toBeUndefined()

      const reply = yield* mes.replyTo(correlationId)
      expect(Date.now()).toBeGreaterThanOrEqual(leaseEnds - 50)
      expect(reply.data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, JobOrderID: "jo-orphan" })
      expect(yield* jobOrderState("jo-orphan")).toBe("NotAllowedToStart_Ready")
      expect(yield* changesOf("jo-orphan", "Store")).toBe(1)
      expect(mes.repliesTo(correlationId)).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("a held request is not acknowledged: after a stop the broker redelivers it", () => {
    const prefix = randomPrefix("eo")
    const session = persistentSession()
    const held = heldCounter()
    return Effect.gen(function* () {
      const instance = yield* startInstance(island(prefix, { mqtt: session, ingress: { onOutcome: held.onOutcome } }))
      const mes = yield* makeMes(broker.url, prefix)
      const request = mes.request(MethodEventTypes.Store, jobOrder("jo-held"))
      yield* crashedHolderClaims(request.id, 30_000)
      yield* mes.send(request)
      yield* eventually(Effect.sync(() => (held.counts.held > 0 ? true : undefined)))
      // A held message holds no slot, so the stop does not wait out the grace period for it.
      yield* instance.stop

      // Reconnect as the island's client id: what was never acknowledged comes first.
      const probe = yield* makeMqttConnection({ url: broker.url, ...session })
      const inbox = yield* probe.subscribe(`${prefix}/+/commands`)
      yield* mes.send(mes.request(MethodEventTypes.Store, jobOrder("jo-sentinel")))
      const [first] = yield* inbox.pipe(Stream.take(1), Stream.runCollect, Effect.timeout("5 seconds"))
      expect(first && Result.isSuccess(first.decoded) ? first.decoded.success.id : undefined).toBe(request.id)
      expect(yield* jobOrderState("jo-held")).toBeUndefined()
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("a duplicate of a processed request gets the first reply again, not a new answer", () => {
    const prefix = randomPrefix("eo")
    return Effect.gen(function* () {
      yield* startInstance(island(prefix))
      const mes = yield* makeMes(broker.url, prefix)
      const request = mes.request(MethodEventTypes.StoreAndStart, jobOrder("jo-once"))
      const first = yield* mes.replyTo(yield* mes.send(request))
      expect(first.data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, JobOrderID: "jo-once" })
      // Processing it again would now answer "already exists"; the duplicate (a new correlation) gets the first reply.
      const againId = yield* mes.send(request)
      const again = yield* mes.replyTo(againId)
      expect(again.data).toEqual(first.data)
      expect(again.id).toBe(first.id)
      expect(again.type).toBe(first.type)
      expect(again.extensions).toMatchObject({ causationid: request.id, correlationid: againId })
      expect(again.extensions["mdcserrorkind"]).toBeUndefined()
      expect(yield* changesOf("jo-once", "StoreAndStart")).toBe(1)
      expect(yield* jobOrderState("jo-once")).toBe("AllowedToStart_Ready")
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })
})
