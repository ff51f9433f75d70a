import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { type SfcCompareAndSet, SfcStateDao, ValkeyLayer } from "@microdcs/store"
import { casWith, snapshotOf } from "./SfcStateKit.js"

/** `waitsMove` of the SFC CAS: a job that stays in a waits set with a new wait start. */

const prefix = randomPrefix()
const services = SfcStateDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

const cas = (jobId: string, expectedVersion: number, extra: Partial<SfcCompareAndSet> = {}): SfcCompareAndSet =>
  casWith(jobId, "s-move", expectedVersion, JSON.stringify({ v: expectedVersion + 1 }), extra)

const everything = snapshotOf(prefix)

layer(services)("SfcStateDao waitsMove", (it) => {
  it.effect("replaces the wait start (where waitsAdd keeps the first one), so the job queues behind jobs that waited longer", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      yield* dao.compareAndSet(cas("job-a", 0, { waitsAdd: [{ typeId: "scan", since: 100 }] }))
      yield* dao.compareAndSet(cas("job-b", 0, { waitsAdd: [{ typeId: "scan", since: 200 }] }))
      expect(yield* dao.waiting("s-move", "scan")).toEqual([{ jobId: "job-a", since: 100 }, { jobId: "job-b", since: 200 }])

      yield* dao.compareAndSet(cas("job-a", 1, { waitsMove: [{ typeId: "scan", since: 300 }] }))
      expect(yield* dao.waiting("s-move", "scan")).toEqual([{ jobId: "job-b", since: 200 }, { jobId: "job-a", since: 300 }])
    })
  )

  it.effect("refuses a bad moved wait with a clear error and writes nothing", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      yield* dao.compareAndSet(cas("job-c", 0, { waitsAdd: [{ typeId: "t", since: 1 }] }))
      const before = yield* everything
      const bad: ReadonlyArray<readonly [string, Partial<SfcCompareAndSet>]> = [
        ["waitsMove[0].typeId", { waitsMove: [{ typeId: "", since: 1 }] }],
        ["waitsMove[0].since", { waitsMove: [{ typeId: "t", since: Number.NaN }] }],
        ["waitsMove", { waitsMove: [{ typeId: "t", since: 5 }], waitsRemove: ["t"] }],
        ["waitsMove", { waitsMove: "t" as unknown as SfcCompareAndSet["waitsAdd"] }]
      ]
      for (const [field, override] of bad) {
        const error = yield* Effect.flip(dao.compareAndSet(cas("job-c", 1, override)))
        expect(error, JSON.stringify(override)).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect(yield* everything).toEqual(before)
    })
  )
})
