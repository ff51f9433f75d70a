import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { mosquittoForFile } from "@microdcs/testkit"
import { JOB_RESPONSE_SCHEMA_ID, JobStates, toStoredState } from "@microdcs/job-state"
import { MqttConnection } from "@microdcs/cloudevents-mqtt"
import { JobOrderDao, PublisherLease, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { PublisherEventTypes, PublisherLive, type StateIndex } from "@microdcs/publisher"
import { admit, caughtUp, freshIsland, jobOrder, move, oldResponseDoc, respond, responseDoc, type Retained, retainedUnder, startPublisher, store, until, wipeRetained } from "./Kit.js"

const broker = mosquittoForFile()

const stateIndexOf = (retained: ReadonlyMap<string, Retained>, topic: string): StateIndex => {
  const found = retained.get(topic)
  expect(found?.event.type).toBe(PublisherEventTypes.stateIndex)
  return found!.event.data as StateIndex
}

const orderData = (id: string, priority: number, state: keyof typeof JobStates, extra: Record<string, unknown> = {}) => ({
  JobOrder: jobOrder(id, priority, extra),
  State: toStoredState(JobStates[state])
})

describe("Publisher", () => {
  it.live("mirrors job orders, results of finished jobs and the state index; Clear and Cancel delete", () => {
    const { valkeyPrefix, base, options } = freshIsland()
    const s = "line-1"
    return Effect.gen(function* () {
      const { publisher } = yield* startPublisher(broker.url, valkeyPrefix, options)
      yield* until(publisher.isActive, (active) => active)

      yield* admit(s, jobOrder("jo-a", 5))
      // Ends first, response last.
      yield* admit(s, jobOrder("jo-b", 9), "StoreAndStart")
      yield* move("jo-b", "Run")
      yield* move("jo-b", "Complete")
      yield* respond(s, "jo-b")
      // Response first, end (Abort) last; the response as the previous release stored it (v1).
      yield* admit(s, jobOrder("jo-c", 1), "StoreAndStart")
      yield* move("jo-c", "Run")
      yield* respond(s, "jo-c", oldResponseDoc("jo-c"))
      yield* move("jo-c", "Abort")
      yield* admit(s, jobOrder("jo-d", 4))
      yield* admit(s, jobOrder("jo-e", 2), "StoreAndStart")
      yield* move("jo-e", "Run")
      yield* move("jo-e", "Complete")
      yield* respond(s, "jo-e")
      // A finished job whose response does not decode: no result, and no has_result.
      yield* admit(s, jobOrder("jo-h", 0), "StoreAndStart")
      yield* move("jo-h", "Run")
      yield* move("jo-h", "Complete")
      yield* respond(s, "jo-h", { ...oldResponseDoc("jo-h"), JobState: "Done" })
      yield* admit(s, jobOrder("jo-f", 3))
      yield* move("jo-f", "Update", jobOrder("jo-f", 7, { Description: "updated" }))
      // A response while the job is not finished is not published yet.
      yield* admit(s, jobOrder("jo-g", 6), "StoreAndStart")
      yield* move("jo-g", "Run")
      yield* respond(s, "jo-g")
      yield* move("jo-g", "Pause")
      // A document the island cannot decode is skipped, and does not stall the scope.
      yield* Effect.flatMap(JobOrderDao, (dao) => dao.put({ id: "jo-bad", scope: s, doc: `{"hello":1}`, priority: 8, expectedVersion: 0 }))
      yield* caughtUp(s)

      // The metadata is published on its own (at start, and when a scope appears): wait for it too.
      const first = yield* until(retainedUnder(broker.url, base), (r) => r.has(`${base}/metadata`))
      const ids = ["jo-a", "jo-b", "jo-c", "jo-d", "jo-e", "jo-f", "jo-g", "jo-h"]
      expect([...first.keys()].sort()).toEqual(
        [
          ...ids.map((id) => `${base}/${s}/order/${id}`),
          ...["jo-b", "jo-c", "jo-e"].map((id) => `${base}/${s}/result/${id}`),
          `${base}/${s}/state-index`,
          `${base}/metadata`
        ].sort()
      )
      for (const { message } of first.values()) {
        expect(message.properties.messageExpiryInterval).toBeGreaterThan(3500)
        expect(message.properties.messageExpiryInterval).toBeLessThanOrEqual(3600)
      }
      const orderF = first.get(`${base}/${s}/order/jo-f`)!.event
      expect(orderF).toMatchObject({ type: PublisherEventTypes.order, subject: `${s}/jo-f`, datacontenttype: "application/json" })
      expect(orderF.data).toEqual(orderData("jo-f", 7, "NotAllowedToStart_Ready", { Description: "updated" }))
      expect(first.get(`${base}/${s}/order/jo-c`)!.event.data).toEqual(orderData("jo-c", 1, "Aborted"))
      expect(first.get(`${base}/${s}/order/jo-g`)!.event.data).toEqual(orderData("jo-g", 6, "Interrupted_Suspended"))
      const resultB = first.get(`${base}/${s}/result/jo-b`)!.event
      expect(resultB).toMatchObject({ type: PublisherEventTypes.result, subject: `${s}/jo-b`, dataschema: JOB_RESPONSE_SCHEMA_ID, data: responseDoc("jo-b") })
      // The response the previous release stored goes out in the current form.
      expect(first.get(`${base}/${s}/result/jo-c`)!.event).toMatchObject({ dataschema: JOB_RESPONSE_SCHEMA_ID, data: responseDoc("jo-c") })

      const index1 = stateIndexOf(first, `${base}/${s}/state-index`)
      expect(index1.scope).toBe(s)
      expect(Date.parse(index1.published_at)).not.toBeNaN()
      expect(index1.jobs).toEqual([
        { job_order_id: "jo-b", state: "Ended_Completed", has_result: true },
        { job_order_id: "jo-f", state: "NotAllowedToStart_Ready", has_result: false },
        { job_order_id: "jo-g", state: "Interrupted_Suspended", has_result: false },
        { job_order_id: "jo-a", state: "NotAllowedToStart_Ready", has_result: false },
        { job_order_id: "jo-d", state: "NotAllowedToStart_Ready", has_result: false },
        { job_order_id: "jo-e", state: "Ended_Completed", has_result: true },
        { job_order_id: "jo-c", state: "Aborted", has_result: true },
        { job_order_id: "jo-h", state: "Ended_Completed", has_result: false }
      ])

      yield* move("jo-d", "Cancel")
      yield* move("jo-e", "Clear")
      yield* move("jo-g", "Resume")
      yield* move("jo-g", "Complete")
      yield* caughtUp(s)

      const second = yield* retainedUnder(broker.url, base)
      for (const gone of ["order/jo-d", "order/jo-e", "result/jo-e"]) expect(second.has(`${base}/${s}/${gone}`)).toBe(false)
      expect(second.get(`${base}/${s}/result/jo-g`)!.event.data).toEqual(responseDoc("jo-g"))
      expect(second.get(`${base}/${s}/order/jo-g`)!.event.data).toEqual(orderData("jo-g", 6, "Ended_Completed"))
      const index2 = stateIndexOf(second, `${base}/${s}/state-index`)
      expect(index2.seq).toBeGreaterThan(index1.seq)
      expect(index2.jobs.map((j) => [j.job_order_id, j.state, j.has_result])).toEqual([
        ["jo-b", "Ended_Completed", true],
        ["jo-f", "NotAllowedToStart_Ready", false],
        ["jo-g", "Ended_Completed", true],
        ["jo-a", "NotAllowedToStart_Ready", false],
        ["jo-c", "Aborted", true],
        ["jo-h", "Ended_Completed", false]
      ])
      // Cancel and Clear retire the job orders: gone from the list and the topics, the documents kept.
      expect((yield* Effect.flatMap(JobOrderDao, (dao) => dao.get("jo-d"))).scope).toBe(s)
      const stats = yield* publisher.stats
      expect(stats).toMatchObject({ active: true, activations: 1 })
      expect(stats.deleted).toBeGreaterThanOrEqual(4)
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })

  it.live("after a restart the topics survive, a lost retained store is refilled, and seq keeps growing", () => {
    const { valkeyPrefix, base, options } = freshIsland()
    return Effect.gen(function* () {
      const first = yield* startPublisher(broker.url, valkeyPrefix, options)
      yield* until(first.publisher.isActive, (active) => active)
      yield* admit("line-1", jobOrder("jo-1", 2), "StoreAndStart")
      yield* admit("line-2", jobOrder("jo-2", 1))
      yield* caughtUp("line-1")
      yield* caughtUp("line-2")
      const before = yield* retainedUnder(broker.url, base)
      const seq1 = stateIndexOf(before, `${base}/line-1/state-index`).seq
      yield* first.stop

      // The broker keeps what was retained while no publisher runs.
      const stopped = yield* retainedUnder(broker.url, base)
      expect([...stopped.keys()].sort()).toEqual([...before.keys()].sort())
      // Then it loses its retained store, and a job order arrives while no publisher runs.
      expect(yield* wipeRetained(broker.url, base)).toBe(5)
      yield* move("jo-1", "Run")

      const second = yield* startPublisher(broker.url, valkeyPrefix, options)
      const after = yield* until(retainedUnder(broker.url, base), (r) => r.size === 5)
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort())
      expect(after.get(`${base}/line-1/order/jo-1`)!.event.data).toEqual(orderData("jo-1", 2, "Running"))
      expect(after.get(`${base}/line-2/order/jo-2`)!.event.data).toEqual(orderData("jo-2", 1, "NotAllowedToStart_Ready"))
      const index = stateIndexOf(after, `${base}/line-1/state-index`)
      expect(index.seq).toBeGreaterThan(seq1)
      expect(index.jobs).toEqual([{ job_order_id: "jo-1", state: "Running", has_result: false }])
      expect(yield* second.publisher.isActive).toBe(true)
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })

  it.live("publishes a scope created after start, found through the nudge without a fallback round", () => {
    const { valkeyPrefix, base, options } = freshIsland()
    return Effect.gen(function* () {
      // The fallback round would come only after a minute: discovery must be the nudge.
      const { publisher } = yield* startPublisher(broker.url, valkeyPrefix, { ...options, fallbackIntervalMs: 60_000 })
      yield* until(publisher.isActive, (active) => active)
      yield* admit("late", jobOrder("jo-late", 1))
      const retained = yield* until(retainedUnder(broker.url, base), (r) => r.has(`${base}/late/state-index`))
      expect(retained.get(`${base}/late/order/jo-late`)!.event.data).toEqual(orderData("jo-late", 1, "NotAllowedToStart_Ready"))
      expect(stateIndexOf(retained, `${base}/late/state-index`).jobs).toEqual([
        { job_order_id: "jo-late", state: "NotAllowedToStart_Ready", has_result: false }
      ])
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })

  it.live("a message over the payload limit is logged and skipped; the cursor still moves on", () => {
    const { valkeyPrefix, base, options } = freshIsland()
    const s = "big"
    return Effect.gen(function* () {
      const { publisher } = yield* startPublisher(broker.url, valkeyPrefix, options, { maxPayloadBytes: 2048 })
      yield* until(publisher.isActive, (active) => active)
      yield* admit(s, jobOrder("jo-big", 1, { Note: "x".repeat(3000) }), "StoreAndStart")
      yield* admit(s, jobOrder("jo-small", 2), "StoreAndStart")
      yield* caughtUp(s)
      const small = yield* retainedUnder(broker.url, base)
      expect(small.has(`${base}/${s}/order/jo-small`)).toBe(true)
      expect(small.has(`${base}/${s}/order/jo-big`)).toBe(false)
      expect(stateIndexOf(small, `${base}/${s}/state-index`).jobs.map((j) => j.job_order_id)).toEqual(["jo-small", "jo-big"])
      // Enough jobs that the index itself goes over the limit: the last index that fitted stays, the cursor moves.
      for (let i = 0; i < 40; i++) yield* admit(s, jobOrder(`jo-many-${i}`, 0))
      yield* caughtUp(s)
      const many = yield* retainedUnder(broker.url, base)
      expect(many.has(`${base}/${s}/order/jo-many-39`)).toBe(true)
      expect(stateIndexOf(many, `${base}/${s}/state-index`).jobs.length).toBeLessThan(42)
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })

  it.live("retains the island's metadata on P/D/metadata, and lists a new scope once it is published", () => {
    const { valkeyPrefix, base, options } = freshIsland()
    return Effect.gen(function* () {
      yield* admit("line-1", jobOrder("jo-1", 1))
      const { publisher } = yield* startPublisher(broker.url, valkeyPrefix, { ...options, source: "urn:test:island-1", instanceId: "pub-1" })
      const first = yield* until(retainedUnder(broker.url, base), (r) => r.has(`${base}/metadata`))
      const metadata = first.get(`${base}/metadata`)!
      expect(metadata.event).toMatchObject({ type: PublisherEventTypes.metadata, source: "urn:test:island-1", datacontenttype: "application/json" })
      expect(metadata.message.properties.messageExpiryInterval).toBeGreaterThan(3500)
      expect(metadata.event.data).toEqual({
        layout_version: 2,
        source: "urn:test:island-1",
        prefix: options.prefix,
        discriminator: "island-1",
        instance_id: "pub-1",
        topics: {
          order: `${base}/{scope}/order/{jobOrderId}`,
          result: `${base}/{scope}/result/{jobOrderId}`,
          state_index: `${base}/{scope}/state-index`,
          state_index_page: `${base}/{scope}/state-index/{page}`,
          events: `${options.prefix}/{scope}/island-1/events`
        },
        event_types: PublisherEventTypes,
        max_payload_bytes: 262_144,
        message_expiry_seconds: 3600,
        scopes: ["line-1"]
      })
      expect(yield* publisher.isActive).toBe(true)

      yield* admit("line-0", jobOrder("jo-0", 1))
      const second = yield* until(retainedUnder(broker.url, base), (r) => {
        const data = r.get(`${base}/metadata`)?.event.data as { scopes?: ReadonlyArray<string> } | undefined
        return data?.scopes?.length === 2
      })
      expect((second.get(`${base}/metadata`)!.event.data as { scopes: ReadonlyArray<string> }).scopes).toEqual(["line-0", "line-1"])
      expect(second.get(`${base}/metadata`)!.event.id).not.toBe(metadata.event.id)
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })

  it.live("bad options fail the layer with InvalidInput and take no lease", () => {
    const { valkeyPrefix } = freshIsland()
    const build = (options: Parameters<typeof PublisherLive>[0]) =>
      Layer.build(
        PublisherLive(options).pipe(
          Layer.provide(MqttConnection.layer({ url: broker.url, connectTimeoutMs: 5000 })),
          Layer.provide(store(valkeyPrefix))
        )
      ).pipe(Effect.scoped, Effect.flip)
    return Effect.gen(function* () {
      expect(yield* build({ prefix: "a/+/b" })).toMatchObject({ _tag: "InvalidInput", field: "prefix" })
      expect(yield* build({ discriminator: "x/y" })).toMatchObject({ _tag: "InvalidInput", field: "discriminator" })
      expect(yield* build({ batchSize: 0 })).toMatchObject({ _tag: "InvalidInput", field: "batchSize" })
      expect(yield* build({ leaseTtlMs: 10 })).toMatchObject({ _tag: "InvalidInput", field: "leaseTtlMs" })
      expect(yield* build({ instanceId: "" })).toMatchObject({ _tag: "InvalidInput", field: "instanceId" })
      expect(yield* Effect.flatMap(PublisherLease, (lease) => lease.holder)).toEqual(Option.none())
      const valkey = yield* Valkey
      expect(yield* unsafeCommand(valkey, "keys", (c) => c.keys(`${valkeyPrefix}*`))).toEqual([])
    }).pipe(Effect.provide(store(valkeyPrefix)))
  })
})
