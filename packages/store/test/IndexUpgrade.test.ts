import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix, scanKeys } from "@microdcs/test-utils"
import { coreIndexedFamilies, IndexMaintenance, IndexRegistry, JobOrderDao, JobResponseDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

/** Every test gets an island of its own: the upgrade walks the whole prefix. */
const island = (registry: Layer.Layer<never> = Layer.empty) =>
  Layer.mergeAll(IndexMaintenance.Default.pipe(Layer.provide(registry)), JobOrderDao.Default, JobResponseDao.Default).pipe(
    Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("idxup") }))
  )

const raw = <A>(run: (c: import("iovalkey").Redis) => Promise<A>) => Effect.flatMap(Valkey, (v) => unsafeCommand(v, "test", run))

const phases = coreIndexedFamilies.map((f) => f.name)

/** A job order record as job-control writes it, Aborted, so both new indexes hold it. */
const record = (id: string) =>
  JSON.stringify({
    JobOrder: { JobOrderID: id, Priority: 1 },
    State: [{ StateText: { Text: "Aborted", Locale: "en" }, StateNumber: 6 }],
    Comment: "spindle overload"
  })

/** Job orders with an Aborted response each in two scopes. */
const seed = Effect.gen(function* () {
  const orders = yield* JobOrderDao
  const responses = yield* JobResponseDao
  for (const scope of ["s1", "s2"]) {
    for (const n of [1, 2, 3]) {
      const id = `${scope}-jo${n}`
      yield* orders.put({ id, scope, doc: record(id), priority: 1, expectedVersion: 0 })
      yield* responses.put({ id: `${scope}-jr${n}`, scope, orderId: id, state: "Aborted", startTime: 1000, endTime: 2000 + n, doc: "{}", expectedVersion: 0 })
    }
  }
})

/** The island as an older release left it: no search index, no failed set. */
const asOlderRelease = Effect.gen(function* () {
  const v = yield* Valkey
  for (const family of ["jobOrderSearch", "jobResponseFailed"] as const) {
    const keys = yield* raw((c) => scanKeys(c, v.keys.pattern(family)))
    expect(keys.length).toBeGreaterThan(0)
    yield* raw((c) => c.del(...keys))
  }
})

const markerKey = Effect.map(Valkey, (v) => v.keys.key("indexVersions", {}) as string)

describe("index upgrade", () => {
  it.effect("rebuilds the indexes an older release did not write, records them, and a second run walks nothing", () =>
    Effect.gen(function* () {
      yield* seed
      yield* asOlderRelease
      const maintenance = yield* IndexMaintenance
      const missing = yield* maintenance.check()
      expect(new Set(missing.map((i) => i.kind))).toEqual(new Set(["document-missing-from-index"]))
      expect(missing.length).toBe(12)
      expect((yield* maintenance.versions).every((p) => p.recorded === 0)).toBe(true)

      const started: Array<ReadonlyArray<string>> = []
      const first = yield* maintenance.upgrade({ holder: "d1", onStart: (p) => Effect.sync(() => void started.push(p)) })
      expect(first._tag).toBe("Upgraded")
      if (first._tag !== "Upgraded") return
      expect(first.phases).toEqual(phases)
      expect(first.summary.repaired).toBeGreaterThanOrEqual(12)
      expect(first.summary.unrepaired).toEqual([])
      expect(started).toEqual([phases])
      expect(yield* maintenance.check()).toEqual([])
      const marker = yield* markerKey
      expect(yield* raw((c) => c.hgetall(marker))).toEqual(Object.fromEntries(phases.map((p) => [p, "1"])))
      // The lease is released at the end.
      expect(yield* raw((c) => c.exists(marker.replace(/index:versions$/, "lock:indexupgrade")))).toBe(0)

      const second = yield* maintenance.upgrade({ holder: "d1", onStart: (p) => Effect.sync(() => void started.push(p)) })
      expect(second).toEqual({ _tag: "Current" })
      expect(started.length).toBe(1)
    }).pipe(Effect.provide(island()))
  )

  it.effect("an empty island records every phase at once", () =>
    Effect.gen(function* () {
      const maintenance = yield* IndexMaintenance
      const result = yield* maintenance.upgrade({ holder: "d1" })
      expect(result).toMatchObject({ _tag: "Upgraded", phases, summary: { repaired: 0, removed: 0 } })
      expect((yield* maintenance.versions).map((p) => p.recorded)).toEqual(phases.map(() => 1))
      expect(yield* maintenance.upgrade({ holder: "d1" })).toEqual({ _tag: "Current" })
    }).pipe(Effect.provide(island()))
  )

  it.effect("of two upgrades at once, one walks and the other is Busy", () =>
    Effect.gen(function* () {
      yield* seed
      yield* asOlderRelease
      const maintenance = yield* IndexMaintenance
      const walking = yield* Deferred.make<void>()
      const goOn = yield* Deferred.make<void>()
      const walks: Array<string> = []
      const run = (holder: string) =>
        maintenance.upgrade({
          holder,
          onStart: () => Effect.sync(() => void walks.push(holder)).pipe(Effect.andThen(Deferred.succeed(walking, undefined)), Effect.andThen(Deferred.await(goOn)))
        })
      const first = yield* Effect.forkChild(run("d1"))
      yield* Deferred.await(walking)
      expect(yield* run("d2")).toEqual({ _tag: "Busy" })
      yield* Deferred.succeed(goOn, undefined)
      expect((yield* Fiber.join(first))._tag).toBe("Upgraded")
      expect(walks).toEqual(["d1"])
      expect(yield* maintenance.check()).toEqual([])
      // After the first one recorded its phases, another finds nothing to do.
      expect(yield* run("d2")).toEqual({ _tag: "Current" })
    }).pipe(Effect.provide(island()))
  )

  it.live("the walker renews its lease while it walks, so a walk longer than the lease keeps others out", () =>
    Effect.gen(function* () {
      const maintenance = yield* IndexMaintenance
      const walking = yield* Deferred.make<void>()
      const goOn = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(
        maintenance.upgrade({ holder: "d1", leaseMs: 300, onStart: () => Deferred.succeed(walking, undefined).pipe(Effect.andThen(Deferred.await(goOn))) })
      )
      yield* Deferred.await(walking)
      yield* Effect.sleep("800 millis")
      expect(yield* maintenance.upgrade({ holder: "d2", leaseMs: 300 })).toEqual({ _tag: "Busy" })
      yield* Deferred.succeed(goOn, undefined)
      expect((yield* Fiber.join(first))._tag).toBe("Upgraded")
    }).pipe(Effect.provide(island()))
  )

  it.effect("a phase whose version went up is the only one rebuilt", () =>
    Effect.gen(function* () {
      yield* seed
      const marker = yield* markerKey
      yield* raw((c) => c.hset(marker, ...phases.flatMap((p) => [p, "1"])))
      yield* asOlderRelease
      const bumped = coreIndexedFamilies.map((f) => (f.name === "joborder-search" ? { ...f, version: 2 } : f))
      const upgraded = yield* Effect.flatMap(IndexMaintenance, (m) => m.upgrade({ holder: "d1" })).pipe(
        Effect.provide(IndexMaintenance.Default.pipe(Layer.provide(Layer.succeed(IndexRegistry, { families: bumped }))))
      )
      expect(upgraded).toMatchObject({ _tag: "Upgraded", phases: ["joborder-search"] })
      expect(yield* raw((c) => c.hget(marker, "joborder-search"))).toBe("2")
      // The failed sets stay missing: their phase was recorded as current.
      const left = yield* Effect.flatMap(IndexMaintenance, (m) => m.check())
      expect(new Set(left.map((i) => i.key.split(":").slice(-2, -1)[0]))).toEqual(new Set(["failed"]))
    }).pipe(Effect.provide(island()))
  )

  it.effect("a rebuild of the whole island records the marker; a rebuild of one scope does not", () =>
    Effect.gen(function* () {
      yield* seed
      const maintenance = yield* IndexMaintenance
      yield* maintenance.rebuild({ scope: "s1" })
      expect((yield* maintenance.versions).every((p) => p.recorded === 0)).toBe(true)
      yield* maintenance.rebuild()
      expect((yield* maintenance.versions).every((p) => p.recorded === 1)).toBe(true)
      expect(yield* maintenance.upgrade({ holder: "d1" })).toEqual({ _tag: "Current" })
    }).pipe(Effect.provide(island()))
  )

  it.effect("a garbled marker or a bad version is refused or walked again, never trusted", () =>
    Effect.gen(function* () {
      const marker = yield* markerKey
      yield* raw((c) => c.hset(marker, ...phases.flatMap((p) => [p, "x"])))
      const maintenance = yield* IndexMaintenance
      expect(yield* maintenance.upgrade({ holder: "d1" })).toMatchObject({ _tag: "Upgraded", phases })
      yield* raw((c) => c.del(marker).then(() => c.set(marker, "1")))
      expect(yield* Effect.flip(maintenance.upgrade({ holder: "d1" }))).toMatchObject({ _tag: "WrongType", key: marker })
      const bad = yield* Effect.flip(
        Effect.flatMap(IndexMaintenance, (m) => m.upgrade({ holder: "d1" })).pipe(
          Effect.provide(IndexMaintenance.Default.pipe(Layer.provide(IndexRegistry.with({ ...coreIndexedFamilies[0]!, name: "extra", version: 0 }))))
        )
      )
      expect(bad).toMatchObject({ _tag: "InvalidInput", field: "indexedFamilies" })
    }).pipe(Effect.provide(island()))
  )
})
