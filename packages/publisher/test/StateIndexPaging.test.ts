import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Result, Layer } from "effect"
import fc from "fast-check"
import { mosquittoForFile } from "@microdcs/testkit"
import { decodeJobOrderRecord, transition, type Trigger } from "@microdcs/job-state"
import { MqttConnection } from "@microdcs/cloudevents-mqtt"
import { JobOrderDao, JobResponseDao, PublisherCursors, PublisherLease, Valkey } from "@microdcs/store"
import { interceptCommands } from "@microdcs/store/testing"
import { Publisher, PublisherEventTypes, PublisherLive, type PublisherOptions } from "@microdcs/publisher"
import { admit, caughtUp, freshIsland, fullStateIndex, jobOrder, move, respond, retainedStateIndex, retainedUnder, startPublisher, store, until } from "./Kit.js"

const broker = mosquittoForFile()

/**
 * A publisher whose store services count every read it makes: job orders (get, list), job
 * responses (get, byOrder) and the commands it sends itself (list scores, lease, cursors). The
 * services are the real ones over the real Valkey; only the count is added.
 */
const startCountedPublisher = (valkeyPrefix: string, options: PublisherOptions, reads: { count: number }) =>
  Effect.gen(function* () {
    const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.andThen(Effect.sync(() => void reads.count++), effect)
    const services = Layer.mergeAll(
      Layer.effect(
        JobOrderDao,
        Effect.map(JobOrderDao, (dao) => JobOrderDao.of({ ...dao, get: (id) => counted(dao.get(id)), list: (scope, page) => counted(dao.list(scope, page)) }))
      ),
      Layer.effect(
        JobResponseDao,
        Effect.map(JobResponseDao, (dao) =>
          JobResponseDao.of({ ...dao, get: (id) => counted(dao.get(id)), byOrder: (id) => counted(dao.byOrder(id)) })
        )
      ),
      Layer.effect(
        Valkey,
        Effect.map(Valkey, (valkey) => interceptCommands(valkey, (_, command) => counted(command)))
      ),
      Layer.effect(PublisherLease, Effect.map(PublisherLease, (lease) => PublisherLease.of({ ...lease, holder: counted(lease.holder) }))),
      Layer.effect(
        PublisherCursors,
        Effect.map(PublisherCursors, (cursors) => PublisherCursors.of({ ...cursors, get: (scope) => counted(cursors.get(scope)) }))
      )
    )
    const layer = PublisherLive(options).pipe(
      Layer.provide(services),
      Layer.provide(MqttConnection.layer({ url: broker.url, clientIdBase: "publisher", connectTimeoutMs: 5000, reconnectMinMs: 100 })),
      Layer.provide(store(valkeyPrefix))
    )
    const context = yield* Layer.build(layer)
    return { publisher: Context.get(context, Publisher) }
  })

/** Runs `trigger` on a job when its current state allows it; `false` when it does not. */
const tryMove = (id: string, trigger: Trigger, priority?: number) =>
  Effect.gen(function* () {
    const stored = yield* (yield* JobOrderDao).get(id)
    const current = Result.getOrThrow(decodeJobOrderRecord(stored.doc))
    if (Result.isFailure(transition(current.state, trigger))) return false
    yield* move(id, trigger, priority === undefined ? undefined : jobOrder(id, priority))
    return true
  })

describe("Publisher state index", () => {
  it.live("an index over maxPayloadBytes is retained in pages under the limit that together list every job; stale pages are deleted", () => {
    const { valkeyPrefix, base, options } = freshIsland()
    const s = "paged"
    const limit = 2048
    return Effect.gen(function* () {
      // The publisher's limit, and the connection's own as the daemon sets both from MQTT_MAX_PAYLOAD_BYTES.
      const { publisher } = yield* startPublisher(broker.url, valkeyPrefix, { ...options, maxPayloadBytes: limit }, { maxPayloadBytes: limit })
      yield* until(publisher.isActive, (active) => active)
      for (let i = 0; i < 80; i++) yield* admit(s, jobOrder(`jo-${String(i).padStart(3, "0")}`, i % 7), i % 2 === 0 ? "Store" : "StoreAndStart")
      yield* caughtUp(s)

      const retained = yield* retainedUnder(broker.url, base)
      const index = retainedStateIndex(retained, base, s)
      expect(index.head.pages).toBeGreaterThanOrEqual(3)
      expect(index.head.total_jobs).toBe(80)
      expect(index.jobs).toEqual(yield* fullStateIndex(s))
      index.pages.forEach((page, n) => expect(page).toMatchObject({ seq: index.head.seq, scope: s, page: n, pages: index.head.pages, total_jobs: 80 }))
      const payloads = [...retained.entries()].filter(([topic]) => topic.startsWith(`${base}/${s}/state-index`)).map(([, r]) => r.message.payload.length)
      expect(payloads).toHaveLength(index.head.pages)
      // The limit is what cuts the pages: every one fits it, and all but the last are nearly full.
      for (const size of payloads) expect(size).toBeLessThanOrEqual(limit)
      expect(payloads.filter((size) => size > limit - 200).length).toBeGreaterThanOrEqual(index.head.pages - 1)
      expect(retained.get(`${base}/${s}/state-index/1`)!.event).toMatchObject({ type: PublisherEventTypes.stateIndex, id: `${s}/state-index/${index.head.seq}/1` })

      // Most jobs leave: the index fits one message again, and the pages it no longer has are deleted.
      for (let i = 0; i < 75; i++) yield* move(`jo-${String(i).padStart(3, "0")}`, "Cancel")
      yield* caughtUp(s)
      const after = yield* retainedUnder(broker.url, base)
      const small = retainedStateIndex(after, base, s)
      expect(small.head).toMatchObject({ pages: 1, total_jobs: 5 })
      expect(small.jobs).toEqual(yield* fullStateIndex(s))
      expect([...after.keys()].filter((topic) => topic.startsWith(`${base}/${s}/state-index/`))).toEqual([])
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })

  it.live("a publisher that becomes active deletes the pages an earlier instance left beyond its own index", () => {
    const { valkeyPrefix, base, options } = freshIsland()
    const s = "handover"
    const limit = 2048
    return Effect.gen(function* () {
      const first = yield* startPublisher(broker.url, valkeyPrefix, { ...options, maxPayloadBytes: limit }, { maxPayloadBytes: limit })
      yield* until(first.publisher.isActive, (active) => active)
      for (let i = 0; i < 80; i++) yield* admit(s, jobOrder(`ho-${String(i).padStart(3, "0")}`, 1))
      yield* caughtUp(s)
      expect(retainedStateIndex(yield* retainedUnder(broker.url, base), base, s).head.pages).toBeGreaterThanOrEqual(3)
      yield* first.stop

      // While no publisher runs, most jobs leave; the next instance knows nothing of the old pages.
      for (let i = 0; i < 75; i++) yield* move(`ho-${String(i).padStart(3, "0")}`, "Cancel")
      const second = yield* startPublisher(broker.url, valkeyPrefix, { ...options, maxPayloadBytes: limit }, { maxPayloadBytes: limit })
      yield* until(second.publisher.isActive, (active) => active)
      yield* caughtUp(s)
      const after = yield* until(retainedUnder(broker.url, base), (r) => ![...r.keys()].some((topic) => topic.startsWith(`${base}/${s}/state-index/`)))
      const index = retainedStateIndex(after, base, s)
      expect(index.head).toMatchObject({ pages: 1, total_jobs: 5 })
      expect(index.jobs).toEqual(yield* fullStateIndex(s))
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })

  it.live("the incremental state index equals a full rebuild after many batches of random changes", () => {
    const { valkeyPrefix, base, options } = freshIsland()
    // Ids beyond the BMP and in U+E000..U+FFFF: Valkey orders ties by bytes, not by UTF-16 units.
    const ids = [...Array.from({ length: 10 }, (_, i) => `jo-${i}`), "jo-\u{1F600}", "jo-\uFF21", "jo-é"]
    const step = fc.record({
      id: fc.constantFrom(...ids),
      trigger: fc.constantFrom<Trigger | "Admit" | "AdmitAndStart" | "Respond">(
        "Admit", "AdmitAndStart", "Respond", "Update", "Start", "RevokeStart", "Run", "Pause", "Resume", "Complete", "Abort", "Cancel", "Clear"
      ),
      priority: fc.integer({ min: 0, max: 3 })
    })
    // Three seeded runs of 120 steps, each in a scope of its own, on one publisher with small batches.
    const runs = fc.sample(fc.array(step, { minLength: 120, maxLength: 120 }), { numRuns: 3, seed: 20240601 })
    return Effect.gen(function* () {
      const { publisher } = yield* startPublisher(broker.url, valkeyPrefix, { ...options, batchSize: 4 })
      yield* until(publisher.isActive, (active) => active)
      for (const [run, steps] of runs.entries()) {
        const s = `random-${run}`
        const admitted = new Set<string>()
        const responded = new Set<string>()
        // Job order ids are island-wide: each run has ids of its own.
        for (const { id: name, trigger, priority } of steps) {
          const id = `r${run}-${name}`
          if (trigger === "Admit" || trigger === "AdmitAndStart") {
            if (admitted.has(id)) continue
            admitted.add(id)
            yield* admit(s, jobOrder(id, priority), trigger === "Admit" ? "Store" : "StoreAndStart")
          } else if (trigger === "Respond") {
            if (!admitted.has(id) || responded.has(id)) continue
            responded.add(id)
            yield* respond(s, id)
          } else if (admitted.has(id)) {
            yield* tryMove(id, trigger, trigger === "Update" ? priority : undefined)
          }
        }
        yield* caughtUp(s)
        const index = retainedStateIndex(yield* retainedUnder(broker.url, base), base, s)
        expect(index.jobs).toEqual(yield* fullStateIndex(s))
      }
      expect((yield* publisher.stats).batches).toBeGreaterThanOrEqual(10)
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })

  it.live("the reads per batch do not grow with the number of jobs in the scope", () => {
    const { valkeyPrefix, options } = freshIsland()
    return Effect.gen(function* () {
      const reads = { count: 0 }
      // No fallback rounds while counting: the one write's nudge is the only round.
      const { publisher } = yield* startCountedPublisher(valkeyPrefix, { ...options, fallbackIntervalMs: 600_000 }, reads)
      yield* until(publisher.isActive, (active) => active)
      for (let i = 0; i < 10; i++) yield* admit("few", jobOrder(`few-${i}`, i))
      for (let i = 0; i < 300; i++) yield* admit("many", jobOrder(`many-${i}`, i % 5))
      yield* caughtUp("few")
      yield* caughtUp("many")

      const readsOfOneBatch = (scope: string, id: string) =>
        Effect.gen(function* () {
          const before = reads.count
          const batches = (yield* publisher.stats).batches
          yield* move(id, "Start")
          yield* caughtUp(scope)
          yield* until(publisher.stats, (stats) => stats.batches > batches)
          return reads.count - before
        })
      const few = yield* readsOfOneBatch("few", "few-3")
      const many = yield* readsOfOneBatch("many", "many-3")
      // The touched job's document and its list score, the lease, the cursor: not one read per job.
      // (A late nudge of the other scope may add a round that reads a cursor.)
      expect(few).toBeGreaterThan(0)
      expect(many).toBeLessThanOrEqual(few + 2)
      expect(many).toBeLessThan(12)
    }).pipe(Effect.provide(store(valkeyPrefix)), Effect.scoped)
  })
})
