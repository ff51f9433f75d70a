import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { IndexMaintenance, JobOrderDao, JobResponseDao, JobResponseFailures, SfcStateDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { manyWith } from "./SfcStateKit.js"

// The failed set of job responses (jobresponse:failed:{scope}): kept by the write scripts, paged
// newest first, checked and rebuilt by index maintenance.

/** Every test gets an island of its own: the check walks the whole prefix. */
const island = () =>
  Layer.mergeAll(IndexMaintenance.Default, JobResponseFailures.Default, JobResponseDao.Default, JobOrderDao.Default, SfcStateDao.Default).pipe(
    Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("failed") }))
  )

const raw = <A>(run: (c: import("iovalkey").Redis) => Promise<A>) => Effect.flatMap(Valkey, (v) => unsafeCommand(v, "test", run))
const failedKey = (scope: string) => Effect.flatMap(Valkey, (v) => v.key("jobResponseFailed", { scope }))
const members = (scope: string) =>
  Effect.gen(function* () {
    const key = yield* failedKey(scope)
    return yield* raw((c) => c.zrange(key, 0, -1, "WITHSCORES"))
  })

/** A live (listed) job order `o-{id}`, or its put with retention (Clear, Cancel retire it). */
const putOrder = (id: string, expectedVersion: number, retainMs = 0, scope = "s1") =>
  Effect.flatMap(JobOrderDao, (dao) => dao.put({ id: `o-${id}`, scope, priority: 1, expectedVersion, doc: "{}", retainMs }))

/** A response of job order `o-{id}`; the order is stored (live) first when the response is new. */
const put = (id: string, state: string, endTime: number, expectedVersion = 0, scope = "s1") =>
  Effect.gen(function* () {
    if (expectedVersion === 0) yield* putOrder(id, -1, 0, scope)
    return yield* Effect.flatMap(JobResponseDao, (dao) =>
      dao.put({ id, scope, orderId: `o-${id}`, state, startTime: endTime - 100, endTime, doc: JSON.stringify({ ID: id }), expectedVersion })
    )
  })

const pageIds = (scope: string, limit: number, before?: { at: number; id: string }) =>
  Effect.map(Effect.flatMap(JobResponseFailures, (f) => f.page(scope, { limit, before })), (page) => page.map((p) => `${p.response.id}@${p.at}`))

describe("the failed set of job responses", () => {
  it.effect("holds the Aborted responses by end time through put, state change and delete; pages newest first with a cursor", () =>
    Effect.gen(function* () {
      yield* put("r1", "Aborted", 1000)
      yield* put("r2", "Ended_Completed", 2000)
      yield* put("r3", "Aborted", 3000)
      yield* put("r4", "Aborted", 3000)
      yield* put("r5", "Aborted", 500, 0, "s2")
      expect(yield* members("s1")).toEqual(["r1", "1000", "r3", "3000", "r4", "3000"])
      expect(yield* pageIds("s1", 2)).toEqual(["r4@3000", "r3@3000"])
      // The cursor of the last item: same millisecond, smaller id, then older.
      expect(yield* pageIds("s1", 2, { at: 3000, id: "r4" })).toEqual(["r3@3000", "r1@1000"])
      expect(yield* pageIds("s1", 2, { at: 1000, id: "r1" })).toEqual([])
      // A response that leaves the failure state leaves the set; one that enters it joins.
      yield* put("r3", "Ended_Completed", 3000, 1)
      yield* put("r2", "Aborted", 2500, 1)
      expect(yield* pageIds("s1", 10)).toEqual(["r4@3000", "r2@2500", "r1@1000"])
      yield* Effect.flatMap(JobResponseDao, (dao) => dao.delete({ id: "r4" }))
      expect(yield* pageIds("s1", 10)).toEqual(["r2@2500", "r1@1000"])
      expect(yield* pageIds("s2", 10)).toEqual(["r5@500"])
      expect(yield* Effect.flatMap(JobResponseFailures, (f) => f.count("s1"))).toBe(2)
      // Deleting a job order ends its job's incident: its responses leave the set (and stay stored).
      yield* Effect.flatMap(JobOrderDao, (dao) => dao.delete({ id: "o-r1" }))
      expect(yield* pageIds("s1", 10)).toEqual(["r2@2500"])
      expect(yield* Effect.flatMap(JobResponseDao, (dao) => dao.get("r1"))).toMatchObject({ state: "Aborted" })
    }).pipe(Effect.provide(island()))
  )

  it.effect("a job order retired with retention (Clear, Cancel) takes its responses out; a later Aborted put does not bring them back", () =>
    Effect.gen(function* () {
      yield* put("r1", "Aborted", 1000)
      yield* put("r2", "Aborted", 2000)
      yield* put("r3", "Aborted", 3000, 0, "s2")
      // A put of the live order (no retention) keeps them.
      yield* putOrder("r1", -1)
      expect(yield* pageIds("s1", 10)).toEqual(["r2@2000", "r1@1000"])
      // Clear: the order leaves the list and expires later; its job is no longer an incident.
      yield* putOrder("r1", -1, 60_000)
      expect(yield* pageIds("s1", 10)).toEqual(["r2@2000"])
      // Cancel of another scope's order: the same put with retention, its own scope's set.
      yield* putOrder("r3", -1, 60_000, "s2")
      expect(yield* pageIds("s2", 10)).toEqual([])
      // A response put Aborted again after its order was retired stays out; a live order's joins.
      yield* put("r1", "Aborted", 1500, 1)
      yield* put("r2", "Aborted", 2500, 1)
      expect(yield* pageIds("s1", 10)).toEqual(["r2@2500"])
      // A response of an order that is not stored (or of no order) is no incident either.
      yield* Effect.flatMap(JobResponseDao, (dao) =>
        dao.put({ id: "r9", scope: "s1", orderId: "nowhere", state: "Aborted", startTime: 1, endTime: 9000, doc: JSON.stringify({ ID: "r9" }), expectedVersion: 0 })
      )
      expect(yield* pageIds("s1", 10)).toEqual(["r2@2500"])
      expect(yield* Effect.flatMap(IndexMaintenance, (m) => m.check())).toEqual([])
    }).pipe(Effect.provide(island()))
  )

  it.effect("rebuild takes out the responses of retired and deleted job orders left in the set by older writes", () =>
    Effect.gen(function* () {
      yield* put("r1", "Aborted", 1000)
      yield* put("r2", "Aborted", 2000)
      yield* put("r3", "Aborted", 3000)
      yield* putOrder("r1", -1, 60_000)
      yield* Effect.flatMap(JobOrderDao, (dao) => dao.delete({ id: "o-r2" }))
      // As an island written before the rule holds them: cleared jobs still in the set.
      const key = yield* failedKey("s1")
      yield* raw((c) => c.zadd(key, 1000, "r1", 2000, "r2"))
      const maintenance = yield* IndexMaintenance
      expect((yield* maintenance.check()).map((f) => `${f.kind} ${f.member}`).sort()).toEqual(["stale-member r1", "stale-member r2"])
      yield* maintenance.rebuild()
      expect(yield* maintenance.check()).toEqual([])
      expect(yield* members("s1")).toEqual(["r3", "3000"])
    }).pipe(Effect.provide(island()))
  )

  it.effect("refuses a bad page, listing every problem", () =>
    Effect.gen(function* () {
      const failures = yield* JobResponseFailures
      const refused = yield* Effect.flip(failures.page("s1", { limit: 0, before: { at: Number.NaN, id: "x" } }))
      expect(refused.message).toContain("limit must be an integer from 1 to 1000, got 0")
      expect(refused.message).toContain("the cursor's time must be a number")
    }).pipe(Effect.provide(island()))
  )

  it.effect("an aborted response the engine creates with its state joins the set, scored by its end time", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const jobResponse = {
        id: "e1", scope: "s1", orderId: "j1", state: "Aborted", startTime: 100, endTime: 900, doc: JSON.stringify({ ID: "e1" }), op: "op-e1", change: "ResultUpdate"
      }
      // Its job order is live (listed), as the engine's move written with it leaves it.
      yield* Effect.flatMap(JobOrderDao, (orders) => orders.put({ id: "j1", scope: "s1", priority: 1, expectedVersion: 0, doc: "{}" }))
      const [written] = yield* dao.compareAndSetMany([manyWith("j1", "s1", 0, JSON.stringify({ status: "aborted" }), { jobResponse })])
      expect(Result.getOrThrow(written!)).toMatchObject({ responseVersion: 1 })
      expect(yield* pageIds("s1", 5)).toEqual(["e1@900"])
    }).pipe(Effect.provide(island()))
  )

  it.effect("check reports a missing, mis-scored and stray member; rebuild repairs them", () =>
    Effect.gen(function* () {
      yield* put("r1", "Aborted", 1000)
      yield* put("r2", "Aborted", 2000)
      yield* put("r3", "Ended_Completed", 3000)
      const key = yield* failedKey("s1")
      yield* raw((c) => c.zrem(key, "r1"))
      yield* raw((c) => c.zadd(key, 7, "r2"))
      yield* raw((c) => c.zadd(key, 3000, "r3", 4000, "ghost"))
      const maintenance = yield* IndexMaintenance
      const found = yield* maintenance.check()
      expect(found.map((f) => `${f.kind} ${f.member}`).sort()).toEqual([
        "document-missing-from-index r1", "index-entry-without-document ghost", "stale-member r3", "wrong-score r2"
      ])
      yield* maintenance.rebuild()
      expect(yield* maintenance.check()).toEqual([])
      expect(yield* members("s1")).toEqual(["r1", "1000", "r2", "2000"])
    }).pipe(Effect.provide(island()))
  )

  it.effect("a failed set of the wrong type is reported, deleted and rebuilt", () =>
    Effect.gen(function* () {
      yield* put("r1", "Aborted", 1000)
      const key = yield* failedKey("s1")
      yield* raw((c) => c.del(key))
      yield* raw((c) => c.set(key, "junk"))
      const maintenance = yield* IndexMaintenance
      expect((yield* maintenance.check()).map((f) => f.kind)).toContain("wrong-type")
      yield* maintenance.rebuild()
      expect(yield* members("s1")).toEqual(["r1", "1000"])
    }).pipe(Effect.provide(island()))
  )
})
