import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref } from "effect"
import { inject } from "vitest"
import type { KeyFamily, KeyParts } from "@microdcs/keyschema"
import { randomPrefix } from "@microdcs/test-utils"
import {
  type Inconsistency,
  IndexMaintenance,
  JobAcceptanceDao,
  JobOrderDao,
  JobResponseDao,
  type RebuildProgress,
  ReferenceListDao,
  Valkey,
  ValkeyLayer,
  WorkMasterDao
} from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { IndexReadHook } from "@microdcs/store/testing"

/** Every test gets an island of its own: the check walks the whole prefix. */
const island = () =>
  Layer.mergeAll(
    IndexMaintenance.Default,
    JobOrderDao.Default,
    JobResponseDao.Default,
    WorkMasterDao.Default,
    ReferenceListDao.Default,
    JobAcceptanceDao.Default
  ).pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("idx") })))

const doc = (id: string, extra: object = {}) => JSON.stringify({ ID: id, ...extra })

const key = <F extends KeyFamily>(family: F, parts: KeyParts<F>) => Effect.flatMap(Valkey, (v) => v.key(family, parts))

/** A raw command behind the DAOs' back: how an index gets broken. */
const raw = <A>(run: (c: import("iovalkey").Redis) => Promise<A>) => Effect.flatMap(Valkey, (v) => unsafeCommand(v, "test", run))

/** Two scopes of documents of every kind, with every kind of index entry. */
const seed = Effect.gen(function* () {
  const orders = yield* JobOrderDao
  const responses = yield* JobResponseDao
  const masters = yield* WorkMasterDao
  for (const scope of ["s1", "s2"]) {
    yield* orders.put({ id: `${scope}-jo1`, scope, doc: doc("jo1"), priority: 1, expectedVersion: 0 })
    yield* orders.put({ id: `${scope}-jo2`, scope, doc: doc("jo2"), priority: 2.5, expectedVersion: 0 })
    yield* orders.put({ id: `${scope}-jo3`, scope, doc: doc("jo3"), priority: 3, expectedVersion: 0 })
    yield* orders.put({ id: `${scope}-jo3`, scope, doc: doc("jo3"), priority: 3, expectedVersion: 1, retainMs: 600_000 })
    yield* responses.put({ id: `${scope}-jr1`, scope, orderId: `${scope}-o1`, state: "Running", startTime: 1000, doc: doc("jr1"), expectedVersion: 0 })
    yield* responses.put({ id: `${scope}-jr2`, scope, orderId: `${scope}-o2`, state: "Completed", startTime: 2000, doc: doc("jr2"), expectedVersion: 0 })
    yield* responses.put({ id: `${scope}-jr3`, scope, orderId: `${scope}-o3`, state: "", doc: doc("jr3"), expectedVersion: 0 })
    yield* masters.put({ id: `${scope}-wm1`, scope, doc: doc("wm1"), expectedVersion: 0 })
  }
  yield* (yield* ReferenceListDao).add("equipment", "refs-only", ["eq-1"])
  // An acceptance limit is configuration: its scope need not be registered (see IndexWalk.ts).
  yield* (yield* JobAcceptanceDao).set("limit-only", 5)
})

/** One of each break in `scope`; returns what the check must report for it. */
const breakScope = (scope: string) =>
  Effect.gen(function* () {
    const joList = yield* key("jobOrderList", { scope })
    const jrList = yield* key("jobResponseList", { scope })
    const wmList = yield* key("workMasterList", { scope })
    const running = yield* key("jobResponseByState", { scope, state: "Running" })
    const completed = yield* key("jobResponseByState", { scope, state: "Completed" })
    const pointer1 = yield* key("jobResponseByOrder", { orderId: `${scope}-o1` })
    const scopes = yield* key("scopes", {})
    yield* raw((c) => c.zrem(joList, `${scope}-jo1`)) // a list member removed
    yield* raw((c) => c.sadd(wmList, `${scope}-ghost`)) // a member for a missing document
    yield* raw((c) => c.zadd(joList, 99, `${scope}-jo2`)) // wrong priority score
    yield* raw((c) => c.zadd(jrList, 5, `${scope}-jr1`)) // wrong start-time score
    yield* raw((c) => c.zadd(joList, 3, `${scope}-jo3`)) // a retired job order listed again
    yield* raw((c) => c.sadd(running, `${scope}-jr2`)) // stale by-state membership
    yield* raw((c) => c.set(pointer1, `${scope}-jr2`)) // stale by-order pointer
    yield* raw((c) => c.del(completed).then(() => c.hset(completed, "x", "1"))) // an index of the wrong type
    yield* raw((c) => c.srem(scopes, scope)) // scope missing from the registry
    const expected: Array<Partial<Inconsistency>> = [
      { kind: "document-missing-from-index", key: joList, member: `${scope}-jo1` },
      { kind: "index-entry-without-document", key: wmList, member: `${scope}-ghost` },
      { kind: "wrong-score", key: joList, member: `${scope}-jo2`, expected: 2.5, found: 99 },
      { kind: "wrong-score", key: jrList, member: `${scope}-jr1`, expected: 1000, found: 5 },
      { kind: "stale-member", key: joList, member: `${scope}-jo3` },
      { kind: "stale-member", key: running, member: `${scope}-jr2` },
      { kind: "stale-pointer", key: pointer1, member: `${scope}-jr2`, expected: `${scope}-o1`, found: `${scope}-o2` },
      { kind: "document-missing-from-index", key: pointer1, member: `${scope}-jr1` },
      { kind: "wrong-type", key: completed, expected: "set", found: "hash" },
      { kind: "scope-not-registered", key: scopes, member: scope }
    ]
    return expected
  })

const expectReports = (found: ReadonlyArray<Inconsistency>, expected: ReadonlyArray<Partial<Inconsistency>>) => {
  for (const e of expected) expect(found, JSON.stringify(e)).toContainEqual(expect.objectContaining(e))
}

describe("IndexMaintenance", () => {
  it.effect("a clean island checks clean, and a rebuild of it changes nothing", () =>
    Effect.gen(function* () {
      yield* seed
      const maintenance = yield* IndexMaintenance
      expect(yield* maintenance.check()).toEqual([])
      const summary = yield* maintenance.rebuild()
      expect(summary).toMatchObject({ repaired: 0, removed: 0, deletedKeys: [], unrepaired: [] })
      expect(summary.scanned).toBeGreaterThan(16)
    }).pipe(Effect.provide(island()))
  )

  it.effect("check reports every break with its kind; rebuild repairs them all", () =>
    Effect.gen(function* () {
      yield* seed
      const expected = yield* breakScope("s1")
      const ghostPointer = yield* key("jobResponseByOrder", { orderId: "o-ghost" })
      yield* raw((c) => c.set(ghostPointer, "nobody")) // a pointer to no document
      const scopes = yield* key("scopes", {})
      yield* raw((c) => c.srem(scopes, "refs-only"))
      const maintenance = yield* IndexMaintenance

      const found = yield* maintenance.check()
      expectReports(found, [
        ...expected,
        { kind: "index-entry-without-document", key: ghostPointer, member: "nobody", scope: null },
        { kind: "scope-not-registered", member: "refs-only", source: yield* key("referenceList", { kind: "equipment", scope: "refs-only" }) }
      ])
      expect(found.every((i) => i.scope === "s1" || i.scope === null || i.member === "refs-only")).toBe(true)
      // One report per broken thing, however many documents see it.
      expect(found.filter((i) => i.kind === "wrong-type")).toHaveLength(1)

      const summary = yield* maintenance.rebuild()
      expect(summary.deletedKeys).toEqual([yield* key("jobResponseByState", { scope: "s1", state: "Completed" })])
      expect(summary.unrepaired).toEqual([])
      // Eleven fixes at least. Some are a removal or a repair depending on SCAN order (the retired job
      // order leaves its list through either script; the stale pointer is removed or taken over);
      // the ghost member and the pointer to nobody can only be removed.
      expect(summary.removed).toBeGreaterThanOrEqual(2)
      expect(summary.repaired + summary.removed).toBeGreaterThanOrEqual(11)
      expect(yield* maintenance.check()).toEqual([])

      // The DAOs read the repaired indexes.
      const orders = yield* JobOrderDao
      expect((yield* orders.list("s1")).items).toEqual([{ id: "s1-jo2", priority: 2.5 }, { id: "s1-jo1", priority: 1 }])
      const responses = yield* JobResponseDao
      expect((yield* responses.byOrder("s1-o1")).id).toBe("s1-jr1")
      expect((yield* responses.byState("s1", "Completed")).ids).toEqual(["s1-jr2"])
      expect((yield* responses.byState("s1", "Running")).ids).toEqual(["s1-jr1"])
      expect((yield* responses.list("s1")).items[0]).toEqual({ id: "s1-jr3", startTime: 0 })
      expect(yield* (yield* WorkMasterDao).list("s1")).toEqual(["s1-wm1"])
    }).pipe(Effect.provide(island()))
  )

  it.effect("two responses for one order, the newer deleted: the check stays clean; older data is rebuilt (issue 9, item 5)", () =>
    Effect.gen(function* () {
      const responses = yield* JobResponseDao
      const maintenance = yield* IndexMaintenance
      yield* responses.put({ id: "r-old", scope: "s1", orderId: "o-two", state: "", doc: doc("r-old"), expectedVersion: 0 })
      yield* responses.put({ id: "r-new", scope: "s1", orderId: "o-two", state: "", doc: doc("r-new"), expectedVersion: 0 })
      yield* responses.delete({ id: "r-new" })
      expect((yield* responses.byOrder("o-two")).id).toBe("r-old")
      expect(yield* maintenance.check()).toEqual([])

      // Responses written before the by-order response sets existed are missing from them; the
      // rebuild adds them, so a later delete finds the one that remains.
      yield* responses.put({ id: "r-new", scope: "s1", orderId: "o-two", state: "", doc: doc("r-new"), expectedVersion: 0 })
      const set = yield* key("jobResponseOfOrder", { orderId: "o-two" })
      yield* raw((c) => c.del(set))
      const missing = yield* maintenance.check()
      expect(missing).toHaveLength(2)
      expectReports(missing, [
        { kind: "document-missing-from-index", key: set, member: "r-old" },
        { kind: "document-missing-from-index", key: set, member: "r-new" }
      ])
      // A member whose response is gone or carries another order is stale.
      yield* raw((c) => c.zadd(set, 5, "r-ghost"))
      const stale = yield* maintenance.check()
      expect(stale).toHaveLength(3)
      expectReports(stale, [
        { kind: "document-missing-from-index", key: set, member: "r-old" },
        { kind: "document-missing-from-index", key: set, member: "r-new" },
        { kind: "index-entry-without-document", key: set, member: "r-ghost", scope: null }
      ])
      const summary = yield* maintenance.rebuild()
      expect(summary).toMatchObject({ repaired: 2, removed: 1, unrepaired: [] })
      expect(yield* maintenance.check()).toEqual([])
      yield* responses.delete({ id: "r-new" })
      expect((yield* responses.byOrder("o-two")).id).toBe("r-old")
    }).pipe(Effect.provide(island()))
  )

  it.effect("a scoped rebuild touches only its scope", () =>
    Effect.gen(function* () {
      yield* seed
      yield* breakScope("s1")
      const s2 = yield* breakScope("s2")
      const maintenance = yield* IndexMaintenance
      yield* maintenance.rebuild({ scope: "s1" })
      expect(yield* maintenance.check({ scope: "s1" })).toEqual([])
      const left = yield* maintenance.check({ scope: "s2" })
      expectReports(left, s2)
      expect(left.every((i) => i.scope === "s2")).toBe(true)
      expect((yield* maintenance.check()).filter((i) => i.scope === "s1")).toEqual([])
      yield* maintenance.rebuild()
      expect(yield* maintenance.check()).toEqual([])
    }).pipe(Effect.provide(island()))
  )

  it.effect("reports progress per batch, with running totals that end at the summary", () =>
    Effect.gen(function* () {
      yield* seed
      yield* breakScope("s1")
      const seen = yield* Ref.make<ReadonlyArray<RebuildProgress>>([])
      const summary = yield* (yield* IndexMaintenance).rebuild({ onProgress: (p) => Ref.update(seen, (all) => [...all, p]) })
      const progress = yield* Ref.get(seen)
      expect(new Set(progress.map((p) => p.phase))).toEqual(new Set(["scopes", "joborder", "joborder-search", "jobresponse", "jobresponse-failed", "workmaster", "references"]))
      for (let i = 1; i < progress.length; i++) {
        expect(progress[i]!.scanned).toBeGreaterThanOrEqual(progress[i - 1]!.scanned)
        expect(progress[i]!.repaired).toBeGreaterThanOrEqual(progress[i - 1]!.repaired)
      }
      expect(progress.at(-1)).toMatchObject({ scanned: summary.scanned, repaired: summary.repaired, removed: summary.removed })
    }).pipe(Effect.provide(island()))
  )

  it.effect("a document that moves between the read and the repair is read again", () =>
    Effect.gen(function* () {
      yield* seed
      const responses = yield* JobResponseDao
      const running = yield* key("jobResponseByState", { scope: "s1", state: "Running" })
      yield* raw((c) => c.srem(running, "s1-jr1"))
      const docKey = yield* key("jobResponse", { id: "s1-jr1" })
      let moved = false
      const hook = {
        afterRead: (k: string, attempt: number) =>
          k === docKey && attempt === 1 && !moved
            ? Effect.suspend(() => {
                moved = true // the put below runs the same hook for its own read: only once
                return responses.put({ id: "s1-jr1", scope: "s1", orderId: "s1-o1", state: "Held", startTime: 1000, doc: doc("jr1"), expectedVersion: -1 })
              }).pipe(Effect.orDie, Effect.asVoid)
            : Effect.void
      }
      const maintenance = yield* IndexMaintenance
      const summary = yield* maintenance.rebuild().pipe(Effect.provideService(IndexReadHook, hook))
      expect(moved).toBe(true)
      expect(summary).toMatchObject({ repaired: 0, removed: 0, unrepaired: [] }) // the put re-established it
      expect(yield* maintenance.check()).toEqual([])
      expect((yield* responses.byState("s1", "Held")).ids).toEqual(["s1-jr1"])
      expect((yield* responses.byState("s1", "Running")).ids).toEqual([])
    }).pipe(Effect.provide(island()))
  )

  it.effect("recomputes a start score from the document when the start field predates it", () =>
    Effect.gen(function* () {
      const responses = yield* JobResponseDao
      const list = yield* key("jobResponseList", { scope: "old" })
      const put = (id: string, extra: object) =>
        Effect.gen(function* () {
          yield* responses.put({ id, scope: "old", orderId: `o-${id}`, state: "", startTime: 1, doc: doc(id, extra), expectedVersion: 0 })
          const k = yield* key("jobResponse", { id })
          yield* raw((c) => c.hdel(k, "start")) // as written before the field existed
        })
      yield* put("iso", { StartTime: "2024-05-01T10:00:00Z" })
      yield* put("num", { StartTime: 12345 })
      yield* put("none", {})
      yield* put("gone", {})
      yield* raw((c) => c.zadd(list, 77, "none").then(() => c.zrem(list, "gone")))
      const maintenance = yield* IndexMaintenance
      const found = yield* maintenance.check()
      expectReports(found, [
        { kind: "wrong-score", member: "iso", expected: Date.parse("2024-05-01T10:00:00Z"), found: 1 },
        { kind: "wrong-score", member: "num", expected: 12345, found: 1 },
        { kind: "document-missing-from-index", member: "gone", expected: "member" }
      ])
      expect(found.some((i) => i.member === "none")).toBe(false) // no start known: any score stands
      yield* maintenance.rebuild()
      expect(yield* maintenance.check()).toEqual([])
      expect((yield* responses.list("old")).items).toEqual([
        { id: "gone", startTime: 0 },
        { id: "none", startTime: 77 },
        { id: "num", startTime: 12345 },
        { id: "iso", startTime: Date.parse("2024-05-01T10:00:00Z") }
      ])
    }).pipe(Effect.provide(island()))
  )

  it.effect("reports what it cannot repair and leaves it alone", () =>
    Effect.gen(function* () {
      yield* seed
      const noScope = yield* key("jobOrder", { id: "no-scope" })
      const notHash = yield* key("workMaster", { id: "not-a-hash" })
      yield* raw((c) => c.hset(noScope, "v", "1", "doc", "{}").then(() => c.set(notHash, "x")))
      const maintenance = yield* IndexMaintenance
      const expected = [
        { kind: "malformed-document", key: noScope, member: "no-scope" },
        { kind: "wrong-type", key: notHash, expected: "hash", found: "string" }
      ] as const
      expectReports(yield* maintenance.check(), expected)
      const summary = yield* maintenance.rebuild()
      expectReports(summary.unrepaired, expected)
      expect(summary.deletedKeys).toEqual([])
      expect(yield* raw((c) => c.get(notHash))).toBe("x")
    }).pipe(Effect.provide(island()))
  )

  it.effect("a registry of the wrong type is reported once, deleted and refilled", () =>
    Effect.gen(function* () {
      yield* seed
      const scopes = yield* key("scopes", {})
      yield* raw((c) => c.del(scopes).then(() => c.set(scopes, "x")))
      const maintenance = yield* IndexMaintenance
      const registry = expect.objectContaining({ kind: "wrong-type", key: scopes, expected: "set", found: "string" })
      expect(yield* maintenance.check()).toEqual([registry])
      // A scoped rebuild could not refill the registry for the other scopes: it leaves it alone.
      const scoped = yield* maintenance.rebuild({ scope: "s1" })
      expect(scoped).toMatchObject({ deletedKeys: [], unrepaired: [registry] })
      expect(yield* raw((c) => c.get(scopes))).toBe("x")
      const summary = yield* maintenance.rebuild()
      expect(summary.deletedKeys).toEqual([scopes])
      expect((yield* raw((c) => c.smembers(scopes))).sort()).toEqual(["refs-only", "s1", "s2"])
      expect(yield* maintenance.check()).toEqual([])
    }).pipe(Effect.provide(island()))
  )

  it.effect("a scope that could never be stored is InvalidInput", () =>
    Effect.gen(function* () {
      const maintenance = yield* IndexMaintenance
      expect(yield* Effect.flip(maintenance.check({ scope: "" }))).toMatchObject({ _tag: "InvalidInput" })
      expect(yield* Effect.flip(maintenance.rebuild({ scope: "" }))).toMatchObject({ _tag: "InvalidInput" })
    }).pipe(Effect.provide(island()))
  )

  it.live("a rebuild while puts and state moves run ends consistent", () =>
    Effect.gen(function* () {
      yield* seed
      yield* breakScope("s1")
      yield* breakScope("s2")
      const orders = yield* JobOrderDao
      const responses = yield* JobResponseDao
      const masters = yield* WorkMasterDao
      const states = ["Running", "Held", "Completed", ""]
      const live = Effect.forEach(
        Array.from({ length: 150 }, (_, i) => i),
        (i) =>
          Effect.gen(function* () {
            const scope = i % 2 === 0 ? "s1" : "s2"
            const n = i % 7
            yield* responses.put({
              id: `${scope}-live${n}`, scope, orderId: `${scope}-lo${i % 5}`, state: states[i % 4]!, startTime: i, doc: doc("live"), expectedVersion: -1
            })
            yield* responses.put({ id: `${scope}-jr1`, scope, orderId: `${scope}-o1`, state: states[(i + 1) % 4]!, startTime: 1000 + i, doc: doc("jr1"), expectedVersion: -1 })
            yield* orders.put({ id: `${scope}-ljo${n}`, scope, doc: doc("ljo"), priority: i, expectedVersion: -1, ...(i % 3 === 0 ? { retainMs: 600_000 } : {}) })
            if (i % 5 === 4) yield* responses.delete({ id: `${scope}-live${n}` }).pipe(Effect.catchTag("NotFound", () => Effect.void))
            if (i % 6 === 0) yield* masters.put({ id: `${scope}-lwm${n}`, scope, doc: doc("wm"), expectedVersion: -1 })
            if (i % 6 === 3) yield* masters.delete({ id: `${scope}-lwm${(n + 3) % 7}` }).pipe(Effect.catchTag("NotFound", () => Effect.void))
          }).pipe(
            // Until the rebuild has deleted the index of the wrong type, a put touching it is refused.
            Effect.catchTag("WrongType", () => Effect.void)
          ),
        { discard: true }
      )
      const maintenance = yield* IndexMaintenance
      const writer = yield* Effect.forkChild(live)
      // Rebuild again and again while the writer runs, yielding between batches so its puts
      // interleave with the repairs; the last rebuild may see the writer finished.
      for (let round = 0; round < 3; round++) {
        yield* maintenance.rebuild({ onProgress: () => Effect.yieldNow })
        if (writer.pollUnsafe() !== undefined) break
      }
      yield* Fiber.join(writer)
      expect(yield* maintenance.check()).toEqual([])
    }).pipe(Effect.provide(island()))
  )
})
