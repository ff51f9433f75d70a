import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobOrderDao, SfcCorrelations, SfcStateDao, ValkeyLayer } from "@microdcs/store"
import { casWith, snapshotOf } from "./SfcStateKit.js"

// The CAS's direct-send trailer (issue 11): the write that emits commands also points their
// correlation ids at the job and reads the job order, so the writer sends with no round trip more.

const prefix = randomPrefix()
const services = Layer.mergeAll(SfcStateDao.Default, SfcCorrelations.Default, JobOrderDao.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
)
const command = { type: "command", jobId: "j", entry: "{}" }

describe("SfcStateDao direct send", () => {
  it.effect("sets the correlation pointers and returns the job order document as it is after the write", () =>
    Effect.gen(function* () {
      const states = yield* SfcStateDao
      const correlations = yield* SfcCorrelations
      const jobOrders = yield* JobOrderDao
      yield* jobOrders.put({ id: "jo-d", scope: "s", priority: 1, expectedVersion: 0, doc: JSON.stringify({ JobOrderID: "jo-d" }) })
      const written = yield* states.compareAndSet(
        casWith("jo-d", "s", 0, "{}", { entries: [command], directSend: { correlationIds: ["c-1", "c-2"], pointerTtlMs: 60_000, readJobOrder: true } })
      )
      expect(written.entryIds).toHaveLength(1)
      expect(written.jobOrder).toEqual({ version: 1, doc: JSON.stringify({ JobOrderID: "jo-d" }) })
      expect([yield* correlations.jobOf("c-1"), yield* correlations.jobOf("c-2")].map((o) => o._tag === "Some" && o.value)).toEqual(["jo-d", "jo-d"])

      // No job order: null; no read asked for: absent; no trailer at all: the reply as before.
      const missing = yield* states.compareAndSet(casWith("jo-none", "s", 0, "{}", { directSend: { correlationIds: [], pointerTtlMs: 1000, readJobOrder: true } }))
      expect(missing.jobOrder).toBeNull()
      const unread = yield* states.compareAndSet(casWith("jo-d", "s", 1, "{}", { directSend: { correlationIds: ["c-3"], pointerTtlMs: 1000, readJobOrder: false } }))
      expect(unread.jobOrder).toBeUndefined()
      expect("jobOrder" in (yield* states.compareAndSet(casWith("jo-d", "s", 2, "{}")))).toBe(false)
    }).pipe(Effect.provide(services))
  )

  it.effect("a writer that holds the job order's version gets the version without the document; another version brings the document", () =>
    Effect.gen(function* () {
      const states = yield* SfcStateDao
      const jobOrders = yield* JobOrderDao
      yield* jobOrders.put({ id: "jo-h", scope: "s", priority: 1, expectedVersion: 0, doc: JSON.stringify({ JobOrderID: "jo-h" }) })
      const read = (heldJobOrderVersion: number) => ({ directSend: { correlationIds: [], pointerTtlMs: 1000, readJobOrder: true, heldJobOrderVersion } })
      expect((yield* states.compareAndSet(casWith("jo-h", "s", 0, "{}", read(1)))).jobOrder).toEqual({ version: 1, doc: undefined })
      const [many] = yield* states.compareAndSetMany([casWith("jo-h", "s", 1, "{}", read(1))])
      expect(Result.getOrThrow(many!).jobOrder).toEqual({ version: 1, doc: undefined })
      // The MES moved it meanwhile: the held copy is stale, the document comes back.
      yield* jobOrders.put({ id: "jo-h", scope: "s", priority: 1, expectedVersion: 1, doc: JSON.stringify({ JobOrderID: "jo-h", moved: true }) })
      const [stale] = yield* states.compareAndSetMany([casWith("jo-h", "s", 2, "{}", read(1))])
      expect(Result.getOrThrow(stale!).jobOrder).toEqual({ version: 2, doc: JSON.stringify({ JobOrderID: "jo-h", moved: true }) })
      expect((yield* states.compareAndSet(casWith("jo-h", "s", 3, "{}", read(0)))).jobOrder).toEqual({ version: 2, doc: JSON.stringify({ JobOrderID: "jo-h", moved: true }) })
      // A held version that is none is refused before anything is written.
      const before = yield* snapshotOf(prefix)
      const bad = yield* Effect.flip(states.compareAndSet(casWith("jo-h", "s", 4, "{}", read(-1))))
      expect(bad).toMatchObject({ _tag: "InvalidInput", field: "directSend.heldJobOrderVersion" })
      const [badMany] = yield* states.compareAndSetMany([casWith("jo-h", "s", 4, "{}", read(1.5))])
      expect(Result.isFailure(badMany!) && badMany.failure).toMatchObject({ _tag: "InvalidInput", field: "directSend.heldJobOrderVersion" })
      expect(yield* snapshotOf(prefix)).toEqual(before)
    }).pipe(Effect.provide(services))
  )

  it.effect("a conflicting write sets no pointer; a bad pointer lifetime is InvalidInput and writes nothing", () =>
    Effect.gen(function* () {
      const states = yield* SfcStateDao
      const correlations = yield* SfcCorrelations
      yield* states.compareAndSet(casWith("jo-c", "s", 0, "{}"))
      const before = yield* snapshotOf(prefix)
      const conflict = yield* Effect.flip(
        states.compareAndSet(casWith("jo-c", "s", 5, "{}", { directSend: { correlationIds: ["c-x"], pointerTtlMs: 1000, readJobOrder: true } }))
      )
      expect(conflict._tag).toBe("VersionConflict")
      const bad = yield* Effect.flip(
        states.compareAndSet(casWith("jo-c", "s", 1, "{}", { directSend: { correlationIds: ["c-y"], pointerTtlMs: 0, readJobOrder: false } }))
      )
      expect(bad).toMatchObject({ _tag: "InvalidInput", field: "directSend.pointerTtlMs" })
      expect(yield* snapshotOf(prefix)).toEqual(before)
      expect((yield* correlations.jobOf("c-x"))._tag).toBe("None")
    }).pipe(Effect.provide(services))
  )
})
