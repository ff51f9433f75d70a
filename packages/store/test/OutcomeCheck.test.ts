import { describe, expect, it, layer } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, References } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import {
  JobOrderDao,
  resolveUnknownOutcome,
  SfcStateDao,
  UnknownOutcome,
  Valkey,
  ValkeyLayer,
  writeOutcome
} from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { dedicated } from "../src/RawDoor.js"

// Issue 9, item 23: an unknown outcome must resolve as "landed" (or stay unknown) for a write
// that landed, even when another write followed it; never as "not landed", which turns the
// resend into a false VersionConflict and the caller's retry into a second application.

const prefix = randomPrefix()
const services = Layer.mergeAll(JobOrderDao.Default, SfcStateDao.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
)

const lost = new UnknownOutcome({ operation: "put-joborder", message: "reply lost (test)" })

/** The check a job order put runs for its write in doubt. */
const jobOrderCheck = (id: string, scope: string, op: string, expectedVersion: number) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("jobOrder", { id })
    const changes = yield* valkey.key("changes", { scope })
    return (elapsedMs: number) => writeOutcome(valkey, { key, op, expectedVersion, record: { changes, kind: "joborder", id }, elapsedMs })
  })

layer(services)("resolving an unknown outcome", (it) => {
  it.effect("a write that landed and was followed by another write resolves as landed, not as a conflict", () =>
    Effect.gen(function* () {
      const orders = yield* JobOrderDao
      let sends = 0
      // The first send lands, another writer follows at once, and the reply is lost.
      const write = Effect.gen(function* () {
        sends++
        const written = yield* orders.put({ id: "jo-a", scope: "s-a", doc: "{}", priority: 1, expectedVersion: 0, op: "op-a" })
        if (sends > 1) return written.version
        yield* orders.put({ id: "jo-a", scope: "s-a", doc: "{\"by\":\"other\"}", priority: 1, expectedVersion: 1, op: "op-other" })
        return yield* lost
      })
      const version = yield* resolveUnknownOutcome(write, yield* jobOrderCheck("jo-a", "s-a", "op-a", 0))
      expect(version).toBe(1)
      expect(sends).toBe(1)
      expect(yield* orders.outcome("jo-a", "op-a")).toMatchObject({ _tag: "Some", value: 1 })
    })
  )

  it.effect("a write that did not land is sent once more, also when other writes followed", () =>
    Effect.gen(function* () {
      const orders = yield* JobOrderDao
      yield* orders.put({ id: "jo-b", scope: "s-b", doc: "{}", priority: 1, expectedVersion: 0, op: "op-b0" })
      let sends = 0
      const write = Effect.gen(function* () {
        sends++
        if (sends === 1) {
          // Lost before it reached the server; meanwhile another document of the scope moves on.
          yield* orders.put({ id: "jo-b-other", scope: "s-b", doc: "{}", priority: 1, expectedVersion: -1 })
          return yield* lost
        }
        return (yield* orders.put({ id: "jo-b", scope: "s-b", doc: "{}", priority: 1, expectedVersion: 1, op: "op-b1" })).version
      })
      expect(yield* resolveUnknownOutcome(write, yield* jobOrderCheck("jo-b", "s-b", "op-b1", 1))).toBe(2)
      expect(sends).toBe(2)
    })
  )

  it.effect("without the change stream to prove it, a moved document stays UnknownOutcome; an unmoved one is resent", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const orders = yield* JobOrderDao
      yield* orders.put({ id: "jo-c", scope: "s-c", doc: "{}", priority: 1, expectedVersion: 0 })
      yield* orders.put({ id: "jo-c", scope: "s-c", doc: "{}", priority: 1, expectedVersion: 1, op: "op-c" })
      yield* orders.put({ id: "jo-c", scope: "s-c", doc: "{}", priority: 1, expectedVersion: 2 })
      // The entries of the window are gone (trimmed): "op-c" cannot be found, nor ruled out.
      const changes = yield* valkey.key("changes", { scope: "s-c" })
      yield* unsafeCommand(valkey, "trim", (c) => c.xtrim(changes, "MAXLEN", 0))
      let sends = 0
      const resend = Effect.sync(() => ++sends)
      const check = yield* jobOrderCheck("jo-c", "s-c", "op-c", 1)
      const unknown = yield* Effect.flip(resolveUnknownOutcome(resend.pipe(Effect.andThen(lost)), check))
      expect(unknown).toBe(lost)
      expect(sends).toBe(1)
      // Still at the version it expected (3): whatever happened, a resend is decided by the version check.
      const unmoved = yield* jobOrderCheck("jo-c", "s-c", "op-never", 3)
      expect(yield* unmoved(0)).toEqual({ _tag: "NotLanded" })
    })
  )

  it.effect("an SFC compare-and-set followed by another one resolves as UnknownOutcome, never VersionConflict", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const sfc = yield* SfcStateDao
      const cas = (expectedVersion: number, op: string) =>
        sfc.compareAndSet({ jobId: "job-d", scope: "s-d", expectedVersion, doc: "{}", op, entries: [], due: null, active: true, waitsAdd: [], waitsRemove: [] })
      yield* cas(0, "op-d1")
      yield* cas(1, "op-d2")
      const key = yield* valkey.key("sfcState", { jobId: "job-d" })
      expect(yield* writeOutcome(valkey, { key, op: "op-d1", expectedVersion: 0, elapsedMs: 0 })).toEqual({ _tag: "Undetermined" })
      expect(yield* writeOutcome(valkey, { key, op: "op-d2", expectedVersion: 1, elapsedMs: 0 })).toEqual({ _tag: "Landed", value: 2 })
      expect(yield* writeOutcome(valkey, { key, op: "op-d3", expectedVersion: 2, elapsedMs: 0 })).toEqual({ _tag: "NotLanded" })
    })
  )
})

describe("unknown outcomes under CLIENT KILL", () => {
  const stressName = `outcome-stress-${prefix}`
  const stressLayer = JobOrderDao.Default.pipe(
    Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix, connectionName: stressName, commandTimeoutMs: 10_000 }))
  )

  it.live(
    "every put reported written landed once, every put reported a conflict left no change entry",
    () =>
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const orders = yield* JobOrderDao
        const admin = yield* dedicated(valkey, "outcome-stress-killer")
        const scope = "stress"
        const written: Array<string> = []
        const conflicts: Array<string> = []
        const unknown: Array<string> = []
        // Kill the shared connection every 150 ms while six writers contend on two documents.
        const killer = yield* Effect.promise(async () => {
          const list = String(await admin.client("LIST"))
          for (const line of list.split("\n")) {
            if (!line.includes(` name=${stressName} `)) continue
            const id = /\bid=(\d+)/.exec(line)?.[1]
            if (id) await admin.client("KILL", "ID", id).catch(() => undefined)
          }
        }).pipe(Effect.andThen(Effect.sleep(Duration.millis(150))), Effect.forever, Effect.forkChild)
        const deadline = Date.now() + 8_000
        let attempt = 0
        const writer = (w: number) =>
          Effect.gen(function* () {
            for (let i = 0; i < 250 && Date.now() < deadline; i++) {
              const id = `doc-${(w + i) % 2}`
              // A failed read (not found, connection down) makes a create-only put: a true conflict if it exists.
              const read = yield* orders.get(id).pipe(Effect.option)
              const expectedVersion = read._tag === "Some" ? read.value.version : 0
              const op = `op-${w}-${i}-${attempt++}`
              const result = yield* Effect.result(orders.put({ id, scope, doc: `{"n":${i}}`, priority: 1, expectedVersion, op }))
              if (result._tag === "Success") written.push(op)
              else if (result.failure._tag === "VersionConflict") conflicts.push(op)
              else if (result.failure._tag === "UnknownOutcome") unknown.push(op)
              // StoreUnavailable: never sent; the next round reads again.
            }
          })
        yield* Effect.all([0, 1, 2, 3, 4, 5].map(writer), { concurrency: "unbounded", discard: true })
        yield* Fiber.interrupt(killer)

        const changes = yield* valkey.key("changes", { scope })
        const entries = yield* Effect.promise(() => admin.xrange(changes, "-", "+"))
        const landed = new Map<string, number>()
        for (const [, fields] of entries) {
          const op = fields[fields.indexOf("op") + 1]!
          landed.set(op, (landed.get(op) ?? 0) + 1)
        }
        expect(entries.length).toBeLessThan(5000) // the whole run is still in the stream
        expect(written.length).toBeGreaterThan(0)
        for (const op of written) expect(landed.get(op), `written ${op}`).toBe(1)
        for (const op of conflicts) expect(landed.get(op), `conflict ${op}`).toBeUndefined()
        for (const op of unknown) expect(landed.get(op) ?? 0, `unknown ${op}`).toBeLessThanOrEqual(1)
      }).pipe(Effect.scoped, Effect.provide(stressLayer), Effect.provideService(References.MinimumLogLevel, "Error")),
    60_000
  )
})
