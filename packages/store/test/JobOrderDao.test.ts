import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobOrderDao, type JobOrderPage, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const prefix = randomPrefix()
const services = JobOrderDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

const doc = (id: string, extra: object = {}) => JSON.stringify({ JobOrderID: id, ...extra })

layer(services)("JobOrderDao", (it) => {
  it.effect("creates, reads, updates with the expected version and deletes", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const created = yield* dao.put({ id: "jo-1", scope: "s1", doc: doc("jo-1"), priority: 5, expectedVersion: 0, change: "Store" })
      expect(created.version).toBe(1)
      const read = yield* dao.get("jo-1")
      expect(read).toMatchObject({ id: "jo-1", scope: "s1", version: 1, op: created.op, doc: doc("jo-1") })
      const updated = yield* dao.put({ id: "jo-1", scope: "s1", doc: doc("jo-1", { x: 1 }), priority: 5, expectedVersion: 1 })
      expect(updated.version).toBe(2)
      expect(yield* dao.outcome("jo-1", updated.op)).toEqual(Option.some(2))
      // A write that another write followed still landed: the change stream shows it (issue 9, item 23).
      expect(yield* dao.outcome("jo-1", created.op)).toEqual(Option.some(1))
      expect(yield* dao.outcome("jo-1", "never-sent")).toEqual(Option.none())
      const deleted = yield* dao.delete({ id: "jo-1" })
      expect(deleted.version).toBe(2)
      expect((yield* Effect.flip(dao.get("jo-1")))._tag).toBe("NotFound")
      expect((yield* Effect.flip(dao.delete({ id: "jo-1" })))._tag).toBe("NotFound")
    })
  )

  it.effect("create-only fails on an existing id; a stale version conflicts and writes nothing", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      yield* dao.put({ id: "jo-2", scope: "s1", doc: doc("jo-2"), priority: 1, expectedVersion: 0 })
      const again = yield* Effect.flip(dao.put({ id: "jo-2", scope: "s1", doc: doc("other"), priority: 1, expectedVersion: 0 }))
      expect(again).toMatchObject({ _tag: "VersionConflict", expected: 0, actual: 1 })
      const stale = yield* Effect.flip(dao.put({ id: "jo-2", scope: "s1", doc: doc("other"), priority: 1, expectedVersion: 7 }))
      expect(stale).toMatchObject({ _tag: "VersionConflict", expected: 7, actual: 1 })
      expect((yield* dao.get("jo-2")).doc).toBe(doc("jo-2"))
      const forced = yield* dao.put({ id: "jo-2", scope: "s1", doc: doc("forced"), priority: 1, expectedVersion: -1 })
      expect(forced.version).toBe(2)
    })
  )

  it.effect("keeps the scope immutable", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      yield* dao.put({ id: "jo-3", scope: "s1", doc: doc("jo-3"), priority: 1, expectedVersion: 0 })
      const moved = yield* Effect.flip(dao.put({ id: "jo-3", scope: "s2", doc: doc("jo-3"), priority: 1, expectedVersion: -1 }))
      expect(moved).toMatchObject({ _tag: "ScopeConflict", storedScope: "s1", requestedScope: "s2" })
    })
  )

  it.effect("lists highest priority first, with paging", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      for (const [id, priority] of [["a", 1], ["b", 9], ["c", 5], ["d", 7]] as const) {
        yield* dao.put({ id, scope: "paged", doc: doc(id), priority, expectedVersion: 0 })
      }
      const first = yield* dao.list("paged", { count: 3 })
      expect(first.items.map((i) => i.id)).toEqual(["b", "d", "c"])
      expect(first.next).toBe(3)
      const second = yield* dao.list("paged", { offset: 3, count: 3 })
      expect(second).toEqual({ items: [{ id: "a", priority: 1 }], next: null })
    })
  )

  it.effect("lists ties in priority by id, ascending, across page boundaries (issue 9, item 19)", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const orders = [["t-c", 5], ["t-a", 5], ["t-e", 1.5], ["t-b", 5], ["t-d", 9], ["t-f", 1.5], ["t-g", -2]] as const
      for (const [id, priority] of orders) yield* dao.put({ id, scope: "ties", doc: doc(id), priority, expectedVersion: 0 })
      const expected = ["t-d", "t-a", "t-b", "t-c", "t-e", "t-f", "t-g"]
      expect((yield* dao.list("ties")).items.map((i) => i.id)).toEqual(expected)
      // The same order whatever the page size: a page may start or end inside a group of ties.
      for (const count of [1, 2, 3, 4]) {
        const ids: Array<string> = []
        let offset: number | null = 0
        while (offset !== null) {
          const page: JobOrderPage = yield* dao.list("ties", { offset, count })
          ids.push(...page.items.map((i) => i.id))
          offset = page.next
        }
        expect(ids, `pages of ${count}`).toEqual(expected)
      }
      expect((yield* dao.list("ties", { offset: 2, count: 2 })).items).toEqual([{ id: "t-b", priority: 5 }, { id: "t-c", priority: 5 }])
      expect(yield* dao.list("ties", { offset: 7 })).toEqual({ items: [], next: null })
      expect(yield* Effect.flip(dao.list("ties", { count: Number.NaN }))).toMatchObject({ _tag: "InvalidInput", field: "count" })
    })
  )

  it.effect("counts the acceptance limit inside the put", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const results = yield* Effect.all(
        ["l1", "l2"].map((id) => Effect.result(dao.put({ id, scope: "limited", doc: doc(id), priority: 1, expectedVersion: 0, limit: 1 }))),
        { concurrency: "unbounded" }
      )
      expect(results.filter((r) => r._tag === "Success")).toHaveLength(1)
      expect(results.find((r) => r._tag === "Failure")).toMatchObject({ failure: { _tag: "LimitReached", limit: 1, count: 1 } })
    })
  )

  it.effect("retires a job order: out of the list, document kept with a TTL", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const valkey = yield* Valkey
      yield* dao.put({ id: "r1", scope: "retire", doc: doc("r1"), priority: 1, expectedVersion: 0 })
      yield* dao.put({ id: "r1", scope: "retire", doc: doc("r1"), priority: 1, expectedVersion: 1, change: "Clear", retainMs: 60_000 })
      expect((yield* dao.list("retire")).items).toEqual([])
      const ttl = yield* unsafeCommand(valkey, "pttl", (c) => c.pttl(`${prefix}:joborder:r1`))
      expect(ttl).toBeGreaterThan(50_000)
      expect((yield* dao.get("r1")).version).toBe(2)
    })
  )
})
