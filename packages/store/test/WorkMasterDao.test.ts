import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { Valkey, ValkeyLayer, WorkMasterDao } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { IndexReadHook } from "@microdcs/store/testing"

const prefix = randomPrefix()
const services = WorkMasterDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

const doc = (id: string, extra: object = {}) => JSON.stringify({ ID: id, ...extra })

layer(services)("WorkMasterDao", (it) => {
  it.effect("creates, reads, updates with the expected version and deletes", () =>
    Effect.gen(function* () {
      const dao = yield* WorkMasterDao
      const created = yield* dao.put({ id: "wm-1", scope: "s1", doc: doc("wm-1"), expectedVersion: 0 })
      expect(created.version).toBe(1)
      expect(yield* dao.get("wm-1")).toEqual({ id: "wm-1", scope: "s1", version: 1, op: created.op, doc: doc("wm-1") })
      expect(yield* dao.isMember("s1", "wm-1")).toBe(true)
      const updated = yield* dao.put({ id: "wm-1", scope: "s1", doc: doc("wm-1", { x: 1 }), expectedVersion: 1, change: "Update" })
      expect(updated.version).toBe(2)
      expect(yield* dao.outcome("wm-1", updated.op)).toEqual(Option.some(2))
      // A write that another write followed still landed: the change stream shows it (issue 9, item 23).
      expect(yield* dao.outcome("wm-1", created.op)).toEqual(Option.some(1))
      expect(yield* dao.outcome("wm-1", "never-sent")).toEqual(Option.none())
      expect(yield* dao.outcome("never", created.op)).toEqual(Option.none())
      const deleted = yield* dao.delete({ id: "wm-1", expectedVersion: 2 })
      expect(deleted.version).toBe(2)
      expect((yield* Effect.flip(dao.get("wm-1")))._tag).toBe("NotFound")
      expect(yield* dao.isMember("s1", "wm-1")).toBe(false)
      expect((yield* Effect.flip(dao.delete({ id: "wm-1" })))._tag).toBe("NotFound")
    })
  )

  it.effect("getMany reads several work masters in one call, in order, leaving the missing out", () =>
    Effect.gen(function* () {
      const dao = yield* WorkMasterDao
      yield* dao.put({ id: "wm-many-1", scope: "s1", doc: doc("wm-many-1"), expectedVersion: 0 })
      yield* dao.put({ id: "wm-many-2", scope: "s2", doc: doc("wm-many-2"), expectedVersion: 0 })
      const read = yield* dao.getMany(["wm-many-2", "wm-nothing", "wm-many-1"])
      expect(read.map((d) => [d.id, d.scope, d.doc])).toEqual([["wm-many-2", "s2", doc("wm-many-2")], ["wm-many-1", "s1", doc("wm-many-1")]])
      expect(yield* dao.getMany([])).toEqual([])
    })
  )

  it.effect("create-only fails on an existing id, a stale version conflicts, -1 overwrites", () =>
    Effect.gen(function* () {
      const dao = yield* WorkMasterDao
      yield* dao.put({ id: "wm-2", scope: "s1", doc: doc("wm-2"), expectedVersion: 0 })
      const again = yield* Effect.flip(dao.put({ id: "wm-2", scope: "s1", doc: doc("other"), expectedVersion: 0 }))
      expect(again).toMatchObject({ _tag: "VersionConflict", expected: 0, actual: 1 })
      const stale = yield* Effect.flip(dao.put({ id: "wm-2", scope: "s1", doc: doc("other"), expectedVersion: 3 }))
      expect(stale).toMatchObject({ _tag: "VersionConflict", expected: 3, actual: 1 })
      expect((yield* dao.get("wm-2")).doc).toBe(doc("wm-2"))
      expect((yield* dao.put({ id: "wm-2", scope: "s1", doc: doc("forced"), expectedVersion: -1 })).version).toBe(2)
      const staleDelete = yield* Effect.flip(dao.delete({ id: "wm-2", expectedVersion: 1 }))
      expect(staleDelete).toMatchObject({ _tag: "VersionConflict", expected: 1, actual: 2 })
      expect((yield* dao.get("wm-2")).version).toBe(2)
    })
  )

  it.effect("keeps the scope immutable; moving is a delete plus a put", () =>
    Effect.gen(function* () {
      const dao = yield* WorkMasterDao
      yield* dao.put({ id: "wm-3", scope: "s1", doc: doc("wm-3"), expectedVersion: 0 })
      const moved = yield* Effect.flip(dao.put({ id: "wm-3", scope: "s2", doc: doc("wm-3"), expectedVersion: -1 }))
      expect(moved).toMatchObject({ _tag: "ScopeConflict", storedScope: "s1", requestedScope: "s2" })
      expect(yield* dao.isMember("s2", "wm-3")).toBe(false)
      yield* dao.delete({ id: "wm-3" })
      yield* dao.put({ id: "wm-3", scope: "s2", doc: doc("wm-3"), expectedVersion: 0 })
      expect(yield* dao.isMember("s1", "wm-3")).toBe(false)
      expect(yield* dao.isMember("s2", "wm-3")).toBe(true)
    })
  )

  it.effect("lists the ids of a scope, sorted", () =>
    Effect.gen(function* () {
      const dao = yield* WorkMasterDao
      for (const id of ["c", "a", "b"]) yield* dao.put({ id, scope: "listed", doc: doc(id), expectedVersion: 0 })
      yield* dao.put({ id: "other", scope: "elsewhere", doc: doc("other"), expectedVersion: 0 })
      expect(yield* dao.list("listed")).toEqual(["a", "b", "c"])
      expect(yield* dao.list("empty")).toEqual([])
      expect((yield* Effect.flip(dao.isMember("listed", "")))._tag).toBe("InvalidInput")
    })
  )

  it.effect("a delete whose scope moved after its read retries with the new scope", () =>
    Effect.gen(function* () {
      const dao = yield* WorkMasterDao
      yield* dao.put({ id: "wm-r", scope: "before", doc: doc("wm-r"), expectedVersion: 0 })
      let interleaved = 0
      // A concurrent caller moves the work master (delete plus put) after our first read.
      const hook = {
        afterRead: () =>
          interleaved++ === 0
            ? dao.delete({ id: "wm-r" }).pipe(
                Effect.andThen(dao.put({ id: "wm-r", scope: "after", doc: doc("wm-r"), expectedVersion: 0 })),
                Effect.orDie,
                Effect.asVoid
              )
            : Effect.void
      }
      expect((yield* dao.delete({ id: "wm-r" }).pipe(Effect.provideService(IndexReadHook, hook))).version).toBe(1)
      expect(yield* dao.isMember("before", "wm-r")).toBe(false)
      expect(yield* dao.isMember("after", "wm-r")).toBe(false)
      expect((yield* Effect.flip(dao.get("wm-r")))._tag).toBe("NotFound")
    })
  )

  it.effect("a scope that keeps moving ends in StateMoved with nothing deleted", () =>
    Effect.gen(function* () {
      const dao = yield* WorkMasterDao
      const valkey = yield* Valkey
      yield* dao.put({ id: "wm-s", scope: "s0", doc: doc("wm-s"), expectedVersion: 0 })
      const key = yield* valkey.key("workMaster", { id: "wm-s" })
      const hook = {
        afterRead: (_key: string, attempt: number) =>
          unsafeCommand(valkey, "hset", (c) => c.hset(key, "scope", `s${attempt}`)).pipe(Effect.orDie, Effect.asVoid)
      }
      const error = yield* Effect.flip(dao.delete({ id: "wm-s" }).pipe(Effect.provideService(IndexReadHook, hook)))
      expect(error).toMatchObject({ _tag: "StateMoved", key, attempts: 5 })
      expect(yield* dao.get("wm-s")).toMatchObject({ version: 1, scope: "s5" })
    })
  )
})
