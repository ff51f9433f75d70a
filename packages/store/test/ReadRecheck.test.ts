import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobOrderDao, SfcStateDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { IndexReadHook } from "@microdcs/store/testing"

// Issue 10, item 3: every delete whose keys depend on the stored scope goes through the one
// read-recheck loop (read, test seam, script re-check, bounded retry), job orders and SFC
// states included, so a scope that moves under the read is read again.

const prefix = randomPrefix()
const layer = Layer.mergeAll(JobOrderDao.Default, SfcStateDao.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
)

const doc = (id: string) => JSON.stringify({ JobOrderID: id })
const state = JSON.stringify({ status: "running" })

/**
 * A hook that runs `interleave` after the first read of `key` and records the attempt number of
 * every read of `key` (the interleaved writes read it too, as attempt 1).
 */
const afterFirstRead = (key: string, interleave: Effect.Effect<void>) => {
  const attempts: Array<number> = []
  const hook = {
    afterRead: (read: string, attempt: number) => {
      if (read !== key) return Effect.void
      attempts.push(attempt)
      return attempts.length === 1 ? interleave : Effect.void
    }
  }
  return { hook, attempts }
}

describe("the read-recheck loop of deletes", () => {
  it.effect("JobOrderDao.delete reads again when the scope moved after its read, and deletes from the new scope", () =>
    Effect.gen(function* () {
      const orders = yield* JobOrderDao
      const valkey = yield* Valkey
      yield* orders.put({ id: "jo-mv", scope: "before", doc: doc("jo-mv"), priority: 1, expectedVersion: 0 })
      const key = yield* valkey.key("jobOrder", { id: "jo-mv" })
      // A concurrent caller moves the job order (delete plus put) after our first read.
      const move = orders.delete({ id: "jo-mv" }).pipe(
        Effect.andThen(orders.put({ id: "jo-mv", scope: "after", doc: doc("jo-mv"), priority: 1, expectedVersion: 0 })),
        Effect.orDie,
        Effect.asVoid
      )
      const { hook, attempts } = afterFirstRead(key, move)
      expect((yield* orders.delete({ id: "jo-mv" }).pipe(Effect.provideService(IndexReadHook, hook))).version).toBe(1)
      expect(Math.max(...attempts)).toBe(2) // the script said `retry`, and the delete read again
      expect((yield* orders.list("before")).items).toEqual([])
      expect((yield* orders.list("after")).items).toEqual([])
      expect((yield* Effect.flip(orders.get("jo-mv")))._tag).toBe("NotFound")
    }).pipe(Effect.provide(layer))
  )

  it.effect("JobOrderDao.delete ends in StateMoved, deleting nothing, when the scope keeps moving", () =>
    Effect.gen(function* () {
      const orders = yield* JobOrderDao
      const valkey = yield* Valkey
      yield* orders.put({ id: "jo-st", scope: "s0", doc: doc("jo-st"), priority: 1, expectedVersion: 0 })
      const key = yield* valkey.key("jobOrder", { id: "jo-st" })
      let n = 0
      const hook = { afterRead: (read: string) => (read === key ? unsafeCommand(valkey, "move", (c) => c.hset(key, "scope", `s${++n}`)).pipe(Effect.orDie, Effect.asVoid) : Effect.void) }
      const error = yield* Effect.flip(orders.delete({ id: "jo-st" }).pipe(Effect.provideService(IndexReadHook, hook)))
      expect(error).toMatchObject({ _tag: "StateMoved", key, attempts: 5 })
      expect(yield* orders.get("jo-st")).toMatchObject({ version: 1, scope: "s5" })
    }).pipe(Effect.provide(layer))
  )

  it.effect("SfcStateDao.delete reads again when the scope moved after its read, and clears the new scope's indexes", () =>
    Effect.gen(function* () {
      const sfc = yield* SfcStateDao
      const valkey = yield* Valkey
      const cas = (scope: string) =>
        sfc.compareAndSet({ jobId: "job-mv", scope, expectedVersion: 0, doc: state, entries: [], due: 5, active: true, waitsAdd: [], waitsRemove: [] })
      yield* cas("before")
      const key = yield* valkey.key("sfcState", { jobId: "job-mv" })
      const move = sfc.delete({ jobId: "job-mv", waits: [] }).pipe(Effect.andThen(cas("after")), Effect.orDie, Effect.asVoid)
      const { hook, attempts } = afterFirstRead(key, move)
      expect((yield* sfc.delete({ jobId: "job-mv", waits: [] }).pipe(Effect.provideService(IndexReadHook, hook))).version).toBe(1)
      expect(Math.max(...attempts)).toBe(2) // the script said `retry`, and the delete read again
      expect(yield* sfc.listActive("before")).toEqual([])
      expect(yield* sfc.listActive("after")).toEqual([])
      expect(yield* sfc.due("after", 10, 10)).toEqual([])
      expect(yield* Effect.flip(sfc.get("job-mv"))).toMatchObject({ _tag: "NotFound", message: "no execution state for job job-mv" })
    }).pipe(Effect.provide(layer))
  )

  it.effect("SfcStateDao.delete ends in StateMoved, deleting nothing, when the scope keeps moving", () =>
    Effect.gen(function* () {
      const sfc = yield* SfcStateDao
      const valkey = yield* Valkey
      yield* sfc.compareAndSet({ jobId: "job-st", scope: "s0", expectedVersion: 0, doc: state, entries: [], due: null, active: true, waitsAdd: [], waitsRemove: [] })
      const key = yield* valkey.key("sfcState", { jobId: "job-st" })
      let n = 0
      const hook = { afterRead: (read: string) => (read === key ? unsafeCommand(valkey, "move", (c) => c.hset(key, "scope", `s${++n}`)).pipe(Effect.orDie, Effect.asVoid) : Effect.void) }
      const error = yield* Effect.flip(sfc.delete({ jobId: "job-st", waits: [] }).pipe(Effect.provideService(IndexReadHook, hook)))
      expect(error).toMatchObject({ _tag: "StateMoved", key, attempts: 5 })
      expect(yield* sfc.get("job-st")).toMatchObject({ version: 1, scope: "s5" })
    }).pipe(Effect.provide(layer))
  )
})
