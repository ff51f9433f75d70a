import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobOrderDao, JobResponseDao, ValkeyLayer } from "@microdcs/store"

// Issue 10, item 3: the paged lists share one page check. A page bound that is not a finite
// number, or beyond any index, is InvalidInput naming it, never a server error (a defect).

const prefix = randomPrefix()
const layer = Layer.mergeAll(JobOrderDao.Default, JobResponseDao.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
)

const badPages = [
  { field: "offset", page: { offset: Number.NaN } },
  { field: "offset", page: { offset: Number.POSITIVE_INFINITY } },
  { field: "offset", page: { offset: 1e300 } },
  { field: "count", page: { count: Number.NaN } },
  { field: "count", page: { count: 1e300 } }
] as const

describe("paged lists", () => {
  it.effect("JobResponseDao.list refuses a bad page bound with InvalidInput naming it", () =>
    Effect.gen(function* () {
      const responses = yield* JobResponseDao
      yield* responses.put({ id: "lp-1", scope: "lp", orderId: "o-1", state: "", startTime: 1, doc: "{}", expectedVersion: 0 })
      for (const { field, page } of badPages) {
        // Effect.flip fails the test with the defect itself if the call dies instead of failing.
        expect(yield* Effect.flip(responses.list("lp", page)), `${field} ${JSON.stringify(page)}`).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect(yield* responses.list("lp", { offset: 0, count: 5 })).toEqual({ items: [{ id: "lp-1", startTime: 1 }], next: null })
    }).pipe(Effect.provide(layer))
  )

  it.effect("JobOrderDao.list refuses the same bounds", () =>
    Effect.gen(function* () {
      const orders = yield* JobOrderDao
      yield* orders.put({ id: "lp-j", scope: "lp", doc: "{}", priority: 1, expectedVersion: 0 })
      for (const { field, page } of badPages) {
        expect(yield* Effect.flip(orders.list("lp", page)), `${field} ${JSON.stringify(page)}`).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect(yield* orders.list("lp")).toEqual({ items: [{ id: "lp-j", priority: 1 }], next: null })
    }).pipe(Effect.provide(layer))
  )

  it.effect("JobResponseDao.byState refuses a cursor beyond 64 bits with InvalidInput naming it", () =>
    Effect.gen(function* () {
      const responses = yield* JobResponseDao
      yield* responses.put({ id: "lp-s", scope: "lp", orderId: "o-s", state: "Running", doc: "{}", expectedVersion: 0 })
      for (const cursor of ["18446744073709551616", "99999999999999999999999"]) {
        expect(yield* Effect.flip(responses.byState("lp", "Running", cursor)), cursor).toMatchObject({ _tag: "InvalidInput", field: "cursor" })
      }
      expect((yield* responses.byState("lp", "Running", "0")).ids).toEqual(["lp-s"])
    }).pipe(Effect.provide(layer))
  )
})
