import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Result, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobOrderDao, ValkeyLayer } from "@microdcs/store"

const prefix = randomPrefix()
const services = JobOrderDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

const doc = (id: string, extra: object = {}) => JSON.stringify({ JobOrderID: id, ...extra })

/** The tag of a failed outcome, or the version of a written one. */
const summary = (outcome: Result.Result<{ readonly version: number }, { readonly _tag: string }>) =>
  Result.match(outcome, { onFailure: (e) => e._tag, onSuccess: (w) => w.version })

layer(services)("JobOrderDao.putMany", (it) => {
  it.effect("writes each valid item; a conflict and bad items in the middle fail alone and write nothing", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      yield* dao.put({ id: "m-taken", scope: "many", doc: doc("m-taken"), priority: 1, expectedVersion: 0 })
      const outcomes = yield* dao.putMany([
        { id: "m-1", scope: "many", doc: doc("m-1"), priority: 3, expectedVersion: 0, op: "op-m-1" },
        { id: "m-taken", scope: "many", doc: doc("overwritten?"), priority: 1, expectedVersion: 0 },
        { id: "m-bad-json", scope: "many", doc: "{not json", priority: 1, expectedVersion: 0 },
        { id: "m-bad-priority", scope: "many", doc: doc("m-bad-priority"), priority: Number.NaN, expectedVersion: 0 },
        { id: "", scope: "many", doc: doc("no id"), priority: 1, expectedVersion: 0 },
        { id: "m-2", scope: "many", doc: doc("m-2"), priority: 2, expectedVersion: 0 }
      ])
      expect(outcomes.map(summary)).toEqual([1, "VersionConflict", "InvalidInput", "InvalidInput", "InvalidInput", 1])
      const [first, conflict, badJson] = outcomes
      expect(Result.getOrThrow(first!).op).toBe("op-m-1")
      expect(Result.flip(conflict!)).toEqual(Result.succeed(expect.objectContaining({ expected: 0, actual: 1 })))
      expect(Result.flip(badJson!)).toEqual(Result.succeed(expect.objectContaining({ field: "doc" })))
      // Nothing written for the refused items, the conflicting one kept its document.
      expect((yield* Effect.flip(dao.get("m-bad-json")))._tag).toBe("NotFound")
      expect((yield* Effect.flip(dao.get("m-bad-priority")))._tag).toBe("NotFound")
      expect((yield* dao.get("m-taken")).doc).toBe(doc("m-taken"))
      expect((yield* dao.get("m-2")).doc).toBe(doc("m-2"))
      expect(yield* dao.outcome("m-1", "op-m-1")).toEqual(Option.some(1))
      // The written ones are indexed as a single put indexes them.
      const page = yield* dao.list("many")
      expect(page.items.map((item) => item.id)).toEqual(["m-1", "m-2", "m-taken"])
    })
  )

  it.effect("counts the acceptance limit item by item, in order", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const outcomes = yield* dao.putMany(
        ["l-1", "l-2", "l-3"].map((id) => ({ id, scope: "limited", doc: doc(id), priority: 1, expectedVersion: 0, limit: 2 }))
      )
      expect(outcomes.map(summary)).toEqual([1, 1, "LimitReached"])
      expect((yield* Effect.flip(dao.get("l-3")))._tag).toBe("NotFound")
    })
  )

  it.effect("updates with expected versions, like single puts", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const created = yield* dao.putMany(["u-1", "u-2"].map((id) => ({ id, scope: "updates", doc: doc(id), priority: 1, expectedVersion: 0 })))
      expect(created.map(summary)).toEqual([1, 1])
      const updated = yield* dao.putMany([
        { id: "u-1", scope: "updates", doc: doc("u-1", { x: 1 }), priority: 1, expectedVersion: 1 },
        { id: "u-2", scope: "updates", doc: doc("u-2", { x: 1 }), priority: 1, expectedVersion: 5 },
        { id: "u-1", scope: "elsewhere", doc: doc("u-1"), priority: 1, expectedVersion: -1 }
      ])
      expect(updated.map(summary)).toEqual([2, "VersionConflict", "ScopeConflict"])
      expect((yield* dao.get("u-2")).version).toBe(1)
    })
  )

  it.effect("an empty batch sends nothing; a batch that is not an array is refused", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      expect(yield* dao.putMany([])).toEqual([])
      const refused = yield* Effect.flip(dao.putMany("nope" as never))
      expect(refused).toMatchObject({ _tag: "InvalidInput", field: "inputs" })
    })
  )
})

describe("JobOrderDao.putMany with minReplicasAck and no replica", () => {
  it.live("every item is UnknownOutcome: the batch's shared WAIT is not confirmed, and no check calls it landed", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const outcomes = yield* dao.putMany(["r-1", "r-2"].map((id) => ({ id, scope: "s", doc: doc(id), priority: 1, expectedVersion: 0 })))
      expect(outcomes.map(summary)).toEqual(["UnknownOutcome", "UnknownOutcome"])
    }).pipe(
      Effect.provide(
        JobOrderDao.Default.pipe(
          Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("pm-ra"), minReplicasAck: 1, replicaAckTimeoutMs: 100 }))
        )
      )
    )
  )
})
