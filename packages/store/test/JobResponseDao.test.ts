import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { inject } from "vitest"
import { putJobResponse } from "@microdcs/lua-scripts"
import { randomPrefix } from "@microdcs/test-utils"
import { JobResponseDao, normalizeState, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { IndexReadHook } from "@microdcs/store/testing"

const prefix = randomPrefix()
const services = JobResponseDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

const doc = (id: string, extra: object = {}) => JSON.stringify({ ID: id, ...extra })

/** The members of the by-state set of (scope, state), sorted. */
const stateMembers = (scope: string, state: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("jobResponseByState", { scope, state })
    return (yield* unsafeCommand(valkey, "smembers", (c) => c.smembers(key))).sort()
  })

const pointer = (orderId: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("jobResponseByOrder", { orderId })
    return yield* unsafeCommand(valkey, "get", (c) => c.get(key))
  })

/** Writes a stored index field behind the DAO's back, as a concurrent writer would have. */
const setField = (id: string, field: string, value: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("jobResponse", { id })
    yield* unsafeCommand(valkey, "hset", (c) => c.hset(key, field, value))
  })

describe("normalizeState", () => {
  it("joins the non-empty state texts with _", () => {
    expect(normalizeState(["Running", "", "Held"])).toBe("Running_Held")
    expect(normalizeState(["Completed"])).toBe("Completed")
    expect(normalizeState(["", ""])).toBe("")
    expect(normalizeState([])).toBe("")
  })
})

layer(services)("JobResponseDao", (it) => {
  it.effect("creates, reads, updates with the expected version and deletes", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      const created = yield* dao.put({
        id: "jr-1", scope: "s1", orderId: "jo-1", state: "Running", startTime: 1000, doc: doc("jr-1"), expectedVersion: 0,
        change: "ResultUpdate"
      })
      expect(created.version).toBe(1)
      expect(yield* dao.get("jr-1")).toEqual({
        id: "jr-1", scope: "s1", version: 1, op: created.op, doc: doc("jr-1"), state: "Running", orderId: "jo-1"
      })
      const updated = yield* dao.put({
        id: "jr-1", scope: "s1", orderId: "jo-1", state: "Running", startTime: 1000, doc: doc("jr-1", { x: 1 }), expectedVersion: 1
      })
      expect(updated.version).toBe(2)
      expect(yield* dao.outcome("jr-1", updated.op)).toEqual(Option.some(2))
      // A write that another write followed still landed: the change stream shows it (issue 9, item 23).
      expect(yield* dao.outcome("jr-1", created.op)).toEqual(Option.some(1))
      expect(yield* dao.outcome("jr-1", "never-sent")).toEqual(Option.none())
      expect((yield* dao.byOrder("jo-1")).version).toBe(2)
      expect((yield* dao.getMany(["jr-1", "missing"])).map((d) => d.id)).toEqual(["jr-1"])

      const deleted = yield* dao.delete({ id: "jr-1", expectedVersion: 2 })
      expect(deleted.version).toBe(2)
      expect((yield* Effect.flip(dao.get("jr-1")))._tag).toBe("NotFound")
      expect((yield* Effect.flip(dao.byOrder("jo-1")))._tag).toBe("NotFound")
      expect(yield* stateMembers("s1", "Running")).toEqual([])
      expect(yield* pointer("jo-1")).toBeNull()
      expect((yield* dao.list("s1")).items).toEqual([])
      expect((yield* Effect.flip(dao.delete({ id: "jr-1" })))._tag).toBe("NotFound")
    })
  )

  it.effect("create-only fails on an existing id, a stale version conflicts, -1 overwrites", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      const base = { id: "jr-2", scope: "s1", orderId: "jo-2", state: "Running" }
      yield* dao.put({ ...base, doc: doc("jr-2"), expectedVersion: 0 })
      const again = yield* Effect.flip(dao.put({ ...base, state: "Held", doc: doc("other"), expectedVersion: 0 }))
      expect(again).toMatchObject({ _tag: "VersionConflict", expected: 0, actual: 1 })
      const stale = yield* Effect.flip(dao.put({ ...base, state: "Held", doc: doc("other"), expectedVersion: 7 }))
      expect(stale).toMatchObject({ _tag: "VersionConflict", expected: 7, actual: 1 })
      expect(yield* dao.get("jr-2")).toMatchObject({ doc: doc("jr-2"), state: "Running", version: 1 })
      expect(yield* stateMembers("s1", "Held")).toEqual([])
      const forced = yield* dao.put({ ...base, state: "Held", doc: doc("forced"), expectedVersion: -1 })
      expect(forced.version).toBe(2)
      const staleDelete = yield* Effect.flip(dao.delete({ id: "jr-2", expectedVersion: 1 }))
      expect(staleDelete).toMatchObject({ _tag: "VersionConflict", expected: 1, actual: 2 })
    })
  )

  it.effect("keeps the scope immutable", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      yield* dao.put({ id: "jr-3", scope: "s1", orderId: "jo-3", state: "A", doc: doc("jr-3"), expectedVersion: 0 })
      const moved = yield* Effect.flip(dao.put({ id: "jr-3", scope: "s2", orderId: "jo-3", state: "B", doc: doc("x"), expectedVersion: -1 }))
      expect(moved).toMatchObject({ _tag: "ScopeConflict", storedScope: "s1", requestedScope: "s2" })
      expect(yield* stateMembers("s2", "B")).toEqual([])
      expect(yield* stateMembers("s1", "A")).toEqual(["jr-3"])
    })
  )

  it.effect("moves a response between by-state sets; an empty state leaves every set", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      const put = (state: string, expectedVersion: number) =>
        dao.put({ id: "jr-m", scope: "moves", orderId: "jo-m", state, doc: doc("jr-m"), expectedVersion })
      yield* put(normalizeState(["Running", "Executing"]), 0)
      expect(yield* stateMembers("moves", "Running_Executing")).toEqual(["jr-m"])
      yield* put("Held", 1)
      expect(yield* stateMembers("moves", "Running_Executing")).toEqual([])
      expect(yield* stateMembers("moves", "Held")).toEqual(["jr-m"])
      yield* put(normalizeState(["", ""]), 2)
      expect(yield* stateMembers("moves", "Held")).toEqual([])
      expect(yield* dao.get("jr-m")).toMatchObject({ state: "", version: 3 })
      expect(yield* dao.byState("moves", "")).toEqual({ ids: [], next: null })
      yield* put("Completed", 3)
      expect(yield* stateMembers("moves", "Completed")).toEqual(["jr-m"])
      yield* put("Completed", 4)
      expect(yield* stateMembers("moves", "Completed")).toEqual(["jr-m"])
      yield* dao.delete({ id: "jr-m" })
      expect(yield* stateMembers("moves", "Completed")).toEqual([])
    })
  )

  it.effect("follows the job order id; a pointer another response took is left alone", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      yield* dao.put({ id: "r1", scope: "orders", orderId: "o1", state: "", doc: doc("r1"), expectedVersion: 0 })
      expect((yield* dao.byOrder("o1")).id).toBe("r1")
      yield* dao.put({ id: "r1", scope: "orders", orderId: "o2", state: "", doc: doc("r1"), expectedVersion: 1 })
      expect(yield* pointer("o1")).toBeNull()
      expect((yield* Effect.flip(dao.byOrder("o1")))._tag).toBe("NotFound")
      expect(yield* dao.byOrder("o2")).toMatchObject({ id: "r1", orderId: "o2", version: 2 })

      // r2 answers o2 too: the pointer now names r2 (last writer wins); r1 moving on must not drop it.
      yield* dao.put({ id: "r2", scope: "orders", orderId: "o2", state: "", doc: doc("r2"), expectedVersion: 0 })
      expect((yield* dao.byOrder("o2")).id).toBe("r2")
      yield* dao.put({ id: "r1", scope: "orders", orderId: "o3", state: "", doc: doc("r1"), expectedVersion: 2 })
      expect(yield* pointer("o2")).toBe("r2")
      yield* dao.delete({ id: "r1" })
      expect(yield* pointer("o3")).toBeNull()
      expect(yield* pointer("o2")).toBe("r2")
      yield* dao.delete({ id: "r2" })
      expect(yield* pointer("o2")).toBeNull()
    })
  )

  it.effect("two responses for one order: when the newer lets go of it, the pointer moves to the older (issue 9, item 5)", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      const put = (id: string, orderId: string, expectedVersion: number) =>
        dao.put({ id, scope: "repoint", orderId, state: "", doc: doc(id), expectedVersion })
      yield* put("older", "o-re", 0)
      yield* put("newer", "o-re", 0)
      expect((yield* dao.byOrder("o-re")).id).toBe("newer")
      // Deleted: the older one is found again.
      yield* dao.delete({ id: "newer" })
      expect((yield* dao.byOrder("o-re")).id).toBe("older")

      // Moved to another order: the same. With three, the newest that remains wins.
      yield* put("newer", "o-re", 0)
      yield* put("newest", "o-re", 0)
      yield* put("newest", "o-other", 1)
      expect((yield* dao.byOrder("o-re")).id).toBe("newer")
      expect((yield* dao.byOrder("o-other")).id).toBe("newest")
      yield* dao.delete({ id: "newer" })
      expect((yield* dao.byOrder("o-re")).id).toBe("older")
      // The last one gone, the pointer goes too.
      yield* dao.delete({ id: "older" })
      expect(yield* pointer("o-re")).toBeNull()
      expect((yield* Effect.flip(dao.byOrder("o-re")))._tag).toBe("NotFound")
    })
  )

  it.effect("does not return a stale pointer", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      const valkey = yield* Valkey
      yield* dao.put({ id: "r-stale", scope: "orders", orderId: "o-real", state: "", doc: doc("r"), expectedVersion: 0 })
      const key = yield* valkey.key("jobResponseByOrder", { orderId: "o-other" })
      yield* unsafeCommand(valkey, "set", (c) => c.set(key, "r-stale"))
      expect((yield* Effect.flip(dao.byOrder("o-other")))._tag).toBe("NotFound")
      yield* unsafeCommand(valkey, "set", (c) => c.set(key, "nobody"))
      expect((yield* Effect.flip(dao.byOrder("o-other")))._tag).toBe("NotFound")
      yield* unsafeCommand(valkey, "set", (c) => c.del(key).then(() => c.sadd(key, "x")))
      expect(yield* Effect.flip(dao.byOrder("o-other"))).toMatchObject({ _tag: "WrongType", key, actual: "set", expected: "string" })
    })
  )

  it.effect("pages a by-state set with SSCAN until the cursor ends", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      const ids = Array.from({ length: 300 }, (_, i) => `p-${i}`)
      yield* Effect.forEach(
        ids,
        (id) => dao.put({ id, scope: "paged", orderId: `o-${id}`, state: "Running", doc: doc(id), expectedVersion: 0 }),
        { concurrency: 32, discard: true }
      )
      const seen = new Set<string>()
      let cursor: string | null = "0"
      let pages = 0
      while (cursor !== null) {
        const page: { ids: ReadonlyArray<string>; next: string | null } = yield* dao.byState("paged", "Running", cursor, 50)
        page.ids.forEach((id) => seen.add(id))
        cursor = page.next
        pages++
      }
      expect(pages).toBeGreaterThan(1)
      expect([...seen].sort()).toEqual([...ids].sort())
      const whole = yield* dao.byState("paged", "Running")
      expect(whole.ids.length).toBeGreaterThan(0)
      const docs = yield* dao.getMany(whole.ids.slice(0, 100))
      expect(docs.map((d) => d.id)).toEqual(whole.ids.slice(0, 100))
      expect(yield* dao.byState("paged", "Unknown")).toEqual({ ids: [], next: null })
      expect((yield* Effect.flip(dao.byState("paged", "Running", "abc")))._tag).toBe("InvalidInput")
      expect((yield* Effect.flip(dao.byState("paged", "Running", "0", 0)))._tag).toBe("InvalidInput")
    })
  )

  it.effect("lists by start time, oldest first, with paging; no start time sorts as 0", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      for (const [id, startTime] of [["a", 3000], ["b", 1000], ["c", undefined], ["d", 2000]] as const) {
        yield* dao.put({ id, scope: "timed", orderId: `o-${id}`, state: "", startTime, doc: doc(id), expectedVersion: 0 })
      }
      const first = yield* dao.list("timed", { count: 3 })
      expect(first).toEqual({ items: [{ id: "c", startTime: 0 }, { id: "b", startTime: 1000 }, { id: "d", startTime: 2000 }], next: 3 })
      expect(yield* dao.list("timed", { offset: 3, count: 3 })).toEqual({ items: [{ id: "a", startTime: 3000 }], next: null })
      const bad = yield* Effect.flip(dao.put({ id: "e", scope: "timed", orderId: "o", state: "", startTime: NaN, doc: doc("e"), expectedVersion: 0 }))
      expect(bad).toMatchObject({ _tag: "InvalidInput", field: "startTime" })
    })
  )
})

layer(services)("JobResponseDao retry protocol", (it) => {
  it.effect("the put script replies retry when the stored state is not what the caller read", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      const valkey = yield* Valkey
      yield* dao.put({ id: "rs", scope: "retry-script", orderId: "o-rs", state: "A", doc: doc("rs"), expectedVersion: 0 })
      const docKey = yield* valkey.key("jobResponse", { id: "rs" })
      const keys = {
        doc: docKey,
        list: yield* valkey.key("jobResponseList", { scope: "retry-script" }),
        newState: yield* valkey.key("jobResponseByState", { scope: "retry-script", state: "B" }),
        oldState: yield* valkey.key("jobResponseByState", { scope: "retry-script", state: "Z" }),
        newOrder: yield* valkey.key("jobResponseByOrder", { orderId: "o-rs" }),
        oldOrder: yield* valkey.key("jobResponseByOrder", { orderId: "o-rs" }),
        scopes: yield* valkey.key("scopes", {}),
        changes: yield* valkey.key("changes", { scope: "retry-script" }),
        newResponses: yield* valkey.key("jobResponseOfOrder", { orderId: "o-rs" }),
        oldResponses: yield* valkey.key("jobResponseOfOrder", { orderId: "o-rs" }),
        failed: yield* valkey.key("jobResponseFailed", { scope: "retry-script" }),
        orders: yield* valkey.key("jobOrderList", { scope: "retry-script" })
      }
      const args = {
        expectedVersion: -1, scope: "retry-script", id: "rs", state: "B", storedState: "Z", orderId: "o-rs", storedOrderId: "o-rs",
        startTime: 0, endTime: 0, doc: doc("rs"), op: "op", change: "put", nudgeChannel: "n"
      }
      expect(yield* valkey.script(putJobResponse, keys, args)).toEqual({ status: "retry", stored: "A" })
      expect(yield* valkey.script(putJobResponse, keys, { ...args, storedState: "A", storedOrderId: "o-old" })).toEqual({
        status: "retry",
        stored: "o-rs"
      })
      expect(yield* dao.get("rs")).toMatchObject({ version: 1, state: "A" })
      expect(yield* stateMembers("retry-script", "B")).toEqual([])
    })
  )

  it.effect("a concurrent state change between read and script is retried with fresh keys", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      const base = { id: "rc", scope: "retry", orderId: "o-rc", doc: doc("rc") }
      yield* dao.put({ ...base, state: "A", expectedVersion: 0 })
      let interleaved = 0
      const hook = {
        afterRead: (_key: string, attempt: number) =>
          // A whole concurrent put lands after our first read: A -> B and the order moves.
          attempt === 1 && interleaved++ === 0
            ? dao.put({ ...base, orderId: "o-rc2", state: "B", expectedVersion: -1 }).pipe(Effect.orDie, Effect.asVoid)
            : Effect.void
      }
      const written = yield* dao.put({ ...base, state: "C", expectedVersion: -1 }).pipe(Effect.provideService(IndexReadHook, hook))
      expect(written.version).toBe(3)
      expect(yield* stateMembers("retry", "A")).toEqual([])
      expect(yield* stateMembers("retry", "B")).toEqual([])
      expect(yield* stateMembers("retry", "C")).toEqual(["rc"])
      expect(yield* pointer("o-rc2")).toBeNull()
      expect((yield* dao.byOrder("o-rc")).state).toBe("C")
    })
  )

  it.effect("a state that keeps moving ends in StateMoved with nothing written", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      yield* dao.put({ id: "rm", scope: "retry", orderId: "o-rm", state: "S0", doc: doc("rm"), expectedVersion: 0 })
      const valkey = yield* Valkey
      const hook = {
        afterRead: (_key: string, attempt: number) =>
          setField("rm", "state", `S${attempt}`).pipe(Effect.provideService(Valkey, valkey), Effect.orDie)
      }
      const put = dao.put({ id: "rm", scope: "retry", orderId: "o-rm", state: "X", doc: doc("new"), expectedVersion: -1 })
      const error = yield* Effect.flip(put.pipe(Effect.provideService(IndexReadHook, hook)))
      expect(error).toMatchObject({ _tag: "StateMoved", attempts: 5 })
      expect(yield* dao.get("rm")).toMatchObject({ version: 1, doc: doc("rm"), state: "S5" })
      expect(yield* stateMembers("retry", "X")).toEqual([])

      const removal = dao.delete({ id: "rm" }).pipe(Effect.provideService(IndexReadHook, hook))
      expect(yield* Effect.flip(removal)).toMatchObject({ _tag: "StateMoved", attempts: 5 })
      expect((yield* dao.get("rm")).version).toBe(1)
    })
  )

  it.effect("a delete retries when the state moved after its read", () =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      const base = { id: "rd", scope: "retry", orderId: "o-rd", doc: doc("rd") }
      yield* dao.put({ ...base, state: "A", expectedVersion: 0 })
      let interleaved = 0
      const hook = {
        afterRead: () =>
          interleaved++ === 0 ? dao.put({ ...base, state: "B", expectedVersion: -1 }).pipe(Effect.orDie, Effect.asVoid) : Effect.void
      }
      expect((yield* dao.delete({ id: "rd" }).pipe(Effect.provideService(IndexReadHook, hook))).version).toBe(2)
      expect(yield* stateMembers("retry", "A")).toEqual([])
      expect(yield* stateMembers("retry", "B")).toEqual([])
      expect(yield* pointer("o-rd")).toBeNull()
    })
  )
})
