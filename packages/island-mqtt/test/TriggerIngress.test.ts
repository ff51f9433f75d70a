import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Layer, Stream } from "effect"
import { type CloudEvent, makeCloudEvent, MqttConnection } from "@microdcs/cloudevents-mqtt"
import { JobControl, jobControlLayer, TRIGGER_CONFIG_EVENT_TYPE, TriggerCatalog, triggerJobOrderId, TriggerStarts } from "@microdcs/job-control"
import { ReturnStatus } from "@microdcs/job-state"
import { TriggerStore, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix, startMosquitto, until } from "@microdcs/test-utils"
import { mosquittoForFile, putWorkMaster } from "@microdcs/testkit"
import {
  JobControlIngress,
  MqttTriggerAnnouncer,
  TriggerChangesListener,
  triggerChangesTopic,
  triggerEventFilters,
  TriggerIngress,
  TRIGGERS_CHANGED_TYPE
} from "@microdcs/island-mqtt"
import { ingressOptions, ISLAND_SOURCE, islandMqtt, jobOrderState, makeMes, SCOPE, storeFor, topicsFor, untilJobOrderIs } from "./Kit.js"

const broker = mosquittoForFile()

type Outcome = readonly [trigger: string, outcome: string, kind?: string | undefined]

/**
 * One island instance with triggers: the job control ingress (the config event arrives there),
 * the trigger ingress, the change listener and the MQTT announcer, over the test's store.
 */
const island = (prefix: string, outcomes: Array<Outcome>, options: { readonly refreshIntervalMs?: number; readonly mqttUrl?: string } = {}) => {
  const topics = topicsFor(prefix)
  return Layer.mergeAll(
    JobControlIngress(ingressOptions(prefix)),
    // One at a time: events of one topic are handled in the order they arrive.
    TriggerIngress({ topics, source: ISLAND_SOURCE, concurrency: 1, retryMinMs: 20, retryMaxMs: 200, shutdownGraceMs: 2000, onTriggerOutcome: (...o) => void outcomes.push(o) }),
    TriggerChangesListener({ topics })
  ).pipe(
    Layer.provideMerge(TriggerStarts.Default),
    Layer.provideMerge(TriggerCatalog.layer({ refreshIntervalMs: options.refreshIntervalMs ?? 3_600_000 })),
    Layer.provideMerge(jobControlLayer()),
    Layer.provide(MqttTriggerAnnouncer({ topics, source: ISLAND_SOURCE, timeoutMs: 300 })),
    Layer.provide(islandMqtt(options.mqttUrl ?? broker.url)),
    Layer.provideMerge(storeFor(prefix))
  )
}

const trigger = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: "com.example.bin.empty.v1", workMasterId: "wm-restock", ...extra })

const binEmpty = (id: string, subject = `${SCOPE}/bin-3`) => makeCloudEvent({ source: "urn:station:7", id, type: "com.example.bin.empty.v1", subject })

const untilHeld = (id: string, ok: (t: { version: number; enabled: boolean } | undefined) => boolean) =>
  until(
    Effect.flatMap(TriggerCatalog, (c) => c.triggers),
    (all) => ok(all.find((t) => t.id === id)),
    { what: `trigger ${id} held` }
  )

describe("trigger ingress over MQTT", () => {
  it("watches every events topic up to the configured depth, with the discriminator", () => {
    expect(Result.getOrThrow(triggerEventFilters({ prefix: "p" }))).toEqual(["p/+/events", "p/+/+/events", "p/+/+/+/events"])
    expect(Result.getOrThrow(triggerEventFilters({ prefix: "p", discriminator: "d" }, 1))).toEqual(["p/+/d/events"])
    expect(Result.isFailure(triggerEventFilters({ prefix: "p" }, 0))).toBe(true)
    expect(Result.getOrThrow(triggerChangesTopic({ prefix: "a/b", discriminator: "d" }))).toBe("a/b/d/triggers")
  })

  it.live("an edit by config event is live for the next event (no refresh), announced on MQTT; a redelivered event starts one job", () => {
    const prefix = randomPrefix("trg")
    const outcomes: Array<Outcome> = []
    return Effect.gen(function* () {
      const mes = yield* makeMes(broker.url, prefix)
      const announcements: Array<CloudEvent> = []
      const changes = yield* mes.connection.subscribe(Result.getOrThrow(triggerChangesTopic(topicsFor(prefix))))
      yield* changes.pipe(
        Stream.runForEach((m) => Effect.sync(() => Result.isSuccess(m.decoded) && announcements.push(m.decoded.success)).pipe(Effect.andThen(m.ack))),
        Effect.forkScoped
      )
      yield* putWorkMaster(SCOPE, { ID: "wm-restock" })

      const put = yield* mes.call(TRIGGER_CONFIG_EVENT_TYPE, trigger("t-live", { subject: `${SCOPE}/bin-*` }))
      expect(put.data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, ID: "t-live", Version: 1 })
      yield* untilHeld("t-live", (t) => t?.version === 1)
      const announced = yield* until(Effect.sync(() => announcements), (a) => a.length > 0, { what: "dag.triggers.changed" })
      expect(announced[0]).toMatchObject({ type: TRIGGERS_CHANGED_TYPE, source: ISLAND_SOURCE, subject: SCOPE, data: { id: "t-live", change: "put", version: 1 } })

      // A station's event on its events topic; then the same event again (a redelivery, a second copy).
      const event = binEmpty("ev-1")
      yield* mes.connection.publish(`${prefix}/station/${SCOPE}/events`, event)
      const jobId = triggerJobOrderId("t-live", event)
      yield* untilJobOrderIs(jobId, "AllowedToStart_Ready")
      yield* mes.connection.publish(`${prefix}/station/${SCOPE}/events`, event)
      yield* until(Effect.sync(() => outcomes), (o) => o.length >= 2, { what: "two outcomes" })
      expect(outcomes).toEqual([
        ["t-live", "started", undefined],
        ["t-live", "duplicate", undefined]
      ])
      // The status event of the job order it started, as StoreAndStart's.
      const status = yield* until(
        Effect.sync(() => mes.statusEvents.filter((e) => (e.data as Record<string, unknown>)["JobOrderID"] === jobId)),
        (s) => s.length > 0,
        { what: "status event" }
      )
      expect(status[0]).toMatchObject({ source: ISLAND_SOURCE, subject: SCOPE, data: { Method: "StoreAndStart", Version: 1 } })
      expect(status[0]!.extensions["causationid"]).toBe(event.id)
    }).pipe(Effect.scoped, Effect.provide(island(prefix, outcomes)))
  })

  it.live("dag.triggers.changed alone reloads the triggers; a disabled trigger starts nothing", () => {
    const prefix = randomPrefix("trg")
    const outcomes: Array<Outcome> = []
    return Effect.gen(function* () {
      const mes = yield* makeMes(broker.url, prefix)
      const store = yield* TriggerStore
      yield* putWorkMaster(SCOPE, { ID: "wm-restock" })
      const row = yield* store.put({ ...trigger("t-off"), scope: SCOPE })
      yield* untilHeld("t-off", (t) => t?.version === 1)
      // Written without its nudge (as if the nudge was lost): only the MQTT announcement tells.
      const valkey = yield* Valkey
      const key = yield* valkey.key("triggers", {})
      yield* unsafeCommand(valkey, "hset", (c) => c.hset(key, "t-off", JSON.stringify({ ...row, enabled: false, version: 2 })))
      yield* mes.connection.publish(Result.getOrThrow(triggerChangesTopic(topicsFor(prefix))), makeCloudEvent({ source: "urn:test:admin", type: TRIGGERS_CHANGED_TYPE, data: {} }))
      yield* untilHeld("t-off", (t) => t?.enabled === false)

      const event = binEmpty("ev-off", SCOPE)
      yield* mes.connection.publish(`${prefix}/${SCOPE}/events`, event)
      // A probe event behind it (refused: its work master is unknown) shows the first was handled.
      yield* store.put({ ...trigger("t-probe", { type: "com.example.probe.v1", workMasterId: "wm-none" }), scope: SCOPE })
      yield* untilHeld("t-probe", (t) => t !== undefined)
      yield* mes.connection.publish(`${prefix}/${SCOPE}/events`, makeCloudEvent({ source: "urn:station:7", type: "com.example.probe.v1", subject: SCOPE }))
      yield* until(Effect.sync(() => outcomes), (o) => o.length >= 1, { what: "probe outcome" })
      expect(outcomes).toEqual([["t-probe", "refused", "UnknownReference"]])
      expect(yield* jobOrderState(triggerJobOrderId("t-off", event))).toBeUndefined()
    }).pipe(Effect.scoped, Effect.provide(island(prefix, outcomes)))
  })

  it.live("with the broker down an edit still succeeds (the announcement is dropped), and the triggers get it anyway", () => {
    const prefix = randomPrefix("trg")
    return Effect.gen(function* () {
      // A broker of its own: this test stops it before the edit.
      const own = yield* Effect.promise(() => startMosquitto())
      let running = true
      const stop = Effect.promise(() => (running ? ((running = false), own.stop()) : Promise.resolve()))
      yield* Effect.addFinalizer(() => stop)
      const dropped: Array<string> = []
      const world = Layer.mergeAll(TriggerCatalog.layer({ refreshIntervalMs: 200 }), jobControlLayer()).pipe(
        Layer.provide(MqttTriggerAnnouncer({ topics: topicsFor(prefix), source: ISLAND_SOURCE, timeoutMs: 300, onDropped: (r) => void dropped.push(r) })),
        Layer.provideMerge(islandMqtt(own.url, { reconnectMinMs: 50 })),
        Layer.provideMerge(storeFor(prefix))
      )
      yield* Effect.gen(function* () {
        yield* stop
        yield* until(Effect.flatMap(MqttConnection, (c) => c.status), (s) => s !== "connected", { what: "connection lost" })
        const jobControl = yield* JobControl
        const { reply } = yield* jobControl.handle({
          id: "edit-1",
          source: "urn:test:admin",
          type: TRIGGER_CONFIG_EVENT_TYPE,
          subject: SCOPE,
          data: trigger("t-down"),
          extensions: {}
        })
        expect(reply.data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, ID: "t-down", Version: 1 })
        expect(dropped).toEqual(["Disconnected"])
        yield* untilHeld("t-down", (t) => t?.version === 1)
      }).pipe(Effect.provide(world))
    }).pipe(Effect.scoped)
  })
})
