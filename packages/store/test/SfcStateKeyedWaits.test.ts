import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { type SfcCompareAndSet, SfcStateDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { casWith, manyWith, snapshotOf } from "./SfcStateKit.js"

/**
 * Keyed waits of the SFC CAS (a pull event routed by its correlation key): the index
 * (scope, type, place, value) → jobs and the count of keyed waits per place, kept in the job's write.
 */

const prefix = randomPrefix()
const services = SfcStateDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))
const SCOPE = "s-keyed"
const LOT = "attribute.lotid"

const cas = (jobId: string, expectedVersion: number, extra: Partial<SfcCompareAndSet> = {}): SfcCompareAndSet =>
  casWith(jobId, SCOPE, expectedVersion, JSON.stringify({ v: expectedVersion + 1 }), extra)
const wait = (value: string, place = LOT, typeId = "scan") => ({ typeId, key: { place, value } })

/** The places hash of a type as it is stored: place → count. */
const placeCounts = (typeId: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("sfcKeyPlaces", { scope: SCOPE, typeId })
    return yield* unsafeCommand(valkey, "hgetall", (c) => c.hgetall(key))
  })

layer(services)("SfcStateDao keyed waits", (it) => {
  it.effect("indexes each job under its expected key and counts the keyed waits per place, in the job's CAS", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      yield* dao.compareAndSet(cas("job-a", 0, { keyedWaitsAdd: [{ ...wait("L1"), since: 100 }] }))
      yield* dao.compareAndSet(cas("job-b", 0, { keyedWaitsAdd: [{ ...wait("L2"), since: 50 }, { ...wait("7", "data.carrier.id"), since: 50 }] }))
      yield* dao.compareAndSetMany([manyWith("job-c", SCOPE, 0, "{}", { keyedWaitsAdd: [{ ...wait("L1"), since: 200 }] })])
      expect(yield* dao.keyedWaiting(SCOPE, wait("L1"), 3)).toEqual([{ jobId: "job-a", since: 100 }, { jobId: "job-c", since: 200 }])
      expect(yield* dao.keyedWaiting(SCOPE, wait("L2"), 3)).toEqual([{ jobId: "job-b", since: 50 }])
      expect(yield* dao.keyedWaiting(SCOPE, wait("L3"), 3)).toEqual([])
      expect([...(yield* dao.keyPlaces(SCOPE, "scan"))].sort()).toEqual([LOT, "data.carrier.id"].sort())
      expect(yield* placeCounts("scan")).toEqual({ [LOT]: "3", "data.carrier.id": "1" })
      // No job is in the type's waits set: an event by type alone finds none of them.
      expect(yield* dao.waiting(SCOPE, "scan")).toEqual([])

      // A move changes the start, not the count; adding a wait the job is in (a reindex) changes nothing.
      yield* dao.compareAndSet(cas("job-a", 1, { keyedWaitsMove: [{ ...wait("L1"), since: 300 }] }))
      yield* dao.compareAndSet(cas("job-c", 1, { keyedWaitsAdd: [{ ...wait("L1"), since: 1 }] }))
      expect(yield* dao.keyedWaiting(SCOPE, wait("L1"), 3)).toEqual([{ jobId: "job-c", since: 200 }, { jobId: "job-a", since: 300 }])
      expect(yield* placeCounts("scan")).toEqual({ [LOT]: "3", "data.carrier.id": "1" })

      // Leaving uncounts; a place with no keyed wait left is gone, and so is a hash with no place.
      yield* dao.compareAndSet(cas("job-b", 1, { keyedWaitsRemove: [wait("7", "data.carrier.id"), wait("L2")] }))
      yield* dao.compareAndSet(cas("job-b", 2, { keyedWaitsRemove: [wait("L2")] }))
      expect(yield* placeCounts("scan")).toEqual({ [LOT]: "2" })
      yield* dao.delete({ jobId: "job-a", waits: [], keyedWaits: [wait("L1")] })
      yield* dao.delete({ jobId: "job-c", waits: [], keyedWaits: [wait("L1"), wait("L9")] })
      expect(yield* dao.keyedWaiting(SCOPE, wait("L1"), 3)).toEqual([])
      expect(yield* dao.keyPlaces(SCOPE, "scan")).toEqual([])
    })
  )

  it.effect("refuses bad keyed waits with a clear error and writes nothing", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      yield* dao.compareAndSet(cas("job-d", 0, { keyedWaitsAdd: [{ ...wait("L1"), since: 1 }] }))
      const before = yield* snapshotOf(prefix)
      const bad: ReadonlyArray<readonly [string, Partial<SfcCompareAndSet>]> = [
        ["keyedWaitsAdd[0].typeId", { keyedWaitsAdd: [{ ...wait("L1", LOT, ""), since: 1 }] }],
        ["keyedWaitsAdd[0].key.place", { keyedWaitsAdd: [{ ...wait("L1", ""), since: 1 }] }],
        ["keyedWaitsMove[0].key.value", { keyedWaitsMove: [{ ...wait(""), since: 1 }] }],
        ["keyedWaitsMove[0].since", { keyedWaitsMove: [{ ...wait("L1"), since: Number.NaN }] }],
        ["keyedWaitsRemove", { keyedWaitsMove: [{ ...wait("L1"), since: 5 }], keyedWaitsRemove: [wait("L1")] }],
        ["keyedWaitsRemove", { keyedWaitsRemove: "L1" as unknown as SfcCompareAndSet["keyedWaitsRemove"] }],
        ["value", { keyedWaitsAdd: [{ ...wait("x".repeat(600)), since: 1 }] }]
      ]
      for (const [field, override] of bad) {
        const error = yield* Effect.flip(dao.compareAndSet(cas("job-d", 1, override)))
        expect(error, JSON.stringify(override).slice(0, 120)).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect(yield* Effect.flip(dao.keyedWaiting(SCOPE, wait("L1"), 0))).toMatchObject({ _tag: "InvalidInput", field: "limit" })
      expect(yield* snapshotOf(prefix)).toEqual(before)
    })
  )

  it.effect("reports a places hash of another type as WrongType and writes nothing of the job", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const valkey = yield* Valkey
      const places = yield* valkey.key("sfcKeyPlaces", { scope: SCOPE, typeId: "broken" })
      yield* unsafeCommand(valkey, "plant", (c) => c.set(places, "x"))
      const error = yield* Effect.flip(dao.compareAndSet(cas("job-e", 0, { keyedWaitsAdd: [{ ...wait("L1", LOT, "broken"), since: 1 }] })))
      expect(error).toMatchObject({ _tag: "WrongType", key: places, expected: "hash", actual: "string" })
      expect(yield* Effect.flip(dao.get("job-e"))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flip(dao.keyPlaces(SCOPE, "broken"))).toMatchObject({ _tag: "WrongType" })
    })
  )
})
