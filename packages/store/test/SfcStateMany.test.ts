import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Queue, Result } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { JobOrderDao, type SfcCompareAndSetMany, SfcCorrelations, SfcStateDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { casWith, manyWith, snapshotOf, xrange } from "./SfcStateKit.js"
import { dedicated } from "../src/RawDoor.js"

// compareAndSetMany (sfc-cas-many): many jobs' CAS in one script call, each job on its own.

const prefix = randomPrefix()
const services = Layer.mergeAll(SfcStateDao.Default, SfcCorrelations.Default, JobOrderDao.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
)

const state = (n: number) => JSON.stringify({ status: "running", n })

/** One job of a batch with nothing but its state; tests override what they exercise. */
const job = (jobId: string, scope: string, expectedVersion: number, extra: Partial<SfcCompareAndSetMany> = {}): SfcCompareAndSetMany =>
  manyWith(jobId, scope, expectedVersion, state(expectedVersion + 1), extra)

/** The version of a written job, or the tag of its error. */
const summary = (result: Result.Result<{ readonly version: number }, { readonly _tag: string }>) =>
  Result.match(result, { onFailure: (e) => e._tag, onSuccess: (w) => w.version })

const everything = snapshotOf(prefix)

describe("SfcStateDao.compareAndSetMany", () => {
  it.effect("writes several jobs in one call: versions, entries, due, active, waits, pointers and the job order read", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const correlations = yield* SfcCorrelations
      yield* (yield* JobOrderDao).put({ id: "w-2", scope: "w", priority: 1, expectedVersion: 0, doc: JSON.stringify({ JobOrderID: "w-2" }) })
      yield* dao.compareAndSet(casWith("w-3", "w", 0, state(1), { waitsAdd: [{ typeId: "t", since: 5 }, { typeId: "u", since: 6 }], due: 70 }))
      const results = yield* dao.compareAndSetMany([
        job("w-1", "w", 0, { op: "op-w-1", entries: [{ type: "start", n: "1" }, { type: "command", n: "2" }], due: 100, waitsAdd: [{ typeId: "t", since: 9 }] }),
        job("w-2", "w", 0, {
          entries: [{ type: "command", n: "3" }],
          directSend: { correlationIds: ["c-w-1", "c-w-2"], pointerTtlMs: 60_000, readJobOrder: true }
        }),
        job("w-3", "w", 1, { active: false, waitsMove: [{ typeId: "u", since: 60 }], waitsRemove: ["t"] })
      ])
      expect(results.map(summary)).toEqual([1, 1, 2])
      const [first, second, third] = results.map(Result.getOrThrow)
      expect(first).toMatchObject({ op: "op-w-1" })
      expect(first!.entryIds).toHaveLength(2)
      expect(second!.jobOrder).toEqual({ version: 1, doc: JSON.stringify({ JobOrderID: "w-2" }) })
      expect(third).toEqual({ version: 2, op: third!.op, entryIds: [] })
      // Entries of every job in job order, in one stream per scope.
      const entries = yield* xrange("w")
      expect(entries.map(([id]) => id)).toEqual([...first!.entryIds!, ...second!.entryIds!])
      expect(entries.map(([, fields]) => fields[3])).toEqual(["1", "2", "3"])
      expect(yield* dao.getMany(["w-1", "w-2", "w-3"])).toEqual(
        [1, 1, 2].map((version, i) => Result.succeed(Option.some(expect.objectContaining({ id: `w-${i + 1}`, scope: "w", version }))))
      )
      expect([...(yield* dao.listActive("w"))].sort()).toEqual(["w-1", "w-2"])
      expect(yield* dao.due("w", 1e15, 10)).toEqual([{ jobId: "w-1", due: 100 }])
      expect(yield* dao.waiting("w", "t")).toEqual([{ jobId: "w-1", since: 9 }])
      expect(yield* dao.waiting("w", "u")).toEqual([{ jobId: "w-3", since: 60 }])
      expect(yield* correlations.jobOf("c-w-2")).toEqual(Option.some("w-2"))
      expect(yield* dao.outcome("w-1", "op-w-1")).toEqual(Option.some(1))
    }).pipe(Effect.provide(services))
  )

  it.effect("a version or scope conflict refuses only its job: the others are written, it is unchanged", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      yield* dao.compareAndSet(casWith("c-1", "c", 0, state(1), { due: 10 }))
      yield* dao.compareAndSet(casWith("c-2", "c", 0, state(1)))
      const before = yield* dao.getMany(["c-1", "c-2"])
      const results = yield* dao.compareAndSetMany([
        job("c-0", "c", 0, { entries: [{ type: "start" }] }),
        job("c-1", "c", 7, { entries: [{ type: "lost" }], due: 99, active: false, appliedEvents: [{ source: "s", id: "c-e" }] }),
        job("c-2", "elsewhere", 1, { entries: [{ type: "lost" }] }),
        job("c-3", "c", 0)
      ])
      expect(results.map(summary)).toEqual([1, "VersionConflict", "ScopeConflict", 1])
      expect(Result.flip(results[1]!)).toEqual(Result.succeed(expect.objectContaining({ expected: 7, actual: 1 })))
      expect(Result.flip(results[2]!)).toEqual(Result.succeed(expect.objectContaining({ storedScope: "c", requestedScope: "elsewhere" })))
      expect(yield* dao.getMany(["c-1", "c-2"])).toEqual(before)
      expect((yield* xrange("c")).map(([, fields]) => fields[1])).toEqual(["start"])
      expect(yield* dao.due("c", 1e15, 10)).toEqual([{ jobId: "c-1", due: 10 }])
      expect(yield* dao.eventApplied("c", "s", "c-e")).toEqual(Option.none())
      expect(yield* dao.listActive("elsewhere")).toEqual([])
    }).pipe(Effect.provide(services))
  )

  it.effect("a duplicate event refuses only its job, naming the event's index and its holder; that job is unchanged", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const held = { source: "station", id: "e-held" }
      yield* dao.compareAndSet(casWith("d-1", "d", 0, state(1), { appliedEvent: held }))
      yield* dao.compareAndSet(casWith("d-2", "d", 0, state(1), { waitsAdd: [{ typeId: "t", since: 1 }] }))
      const before = yield* everything
      const results = yield* dao.compareAndSetMany([
        // A stale version too: the duplicate is judged first, as in compareAndSet.
        job("d-2", "d", 5, { appliedEvents: [{ source: "station", id: "e-new" }, held], entries: [{ type: "x" }], waitsRemove: ["t"] }),
        job("d-3", "d", 0, { appliedEvents: [{ source: "station", id: "e-3" }], entries: [{ type: "y" }] }),
        // An event an earlier job of the same call recorded is a duplicate for a later one.
        job("d-4", "d", 0, { appliedEvents: [{ source: "station", id: "e-3" }] })
      ])
      expect(results.map(summary)).toEqual(["DuplicateEvent", 1, "DuplicateEvent"])
      const valkey = yield* Valkey
      const heldKey = yield* valkey.key("sfcEvent", { scope: "d", ...held })
      const duplicate = Result.flip(results[0]!)
      expect(duplicate).toEqual(Result.succeed(expect.objectContaining({ _tag: "DuplicateEvent", eventIndex: 1, jobId: "d-1", key: heldKey })))
      expect(Result.getOrThrow(duplicate).message).toContain("applied event 1")
      expect(Result.flip(results[2]!)).toEqual(Result.succeed(expect.objectContaining({ eventIndex: 0, jobId: "d-3" })))
      // Nothing of d-2: not its state, waits or first (new) event; nothing of d-4.
      expect(yield* dao.eventApplied("d", "station", "e-new")).toEqual(Option.none())
      expect(yield* dao.waiting("d", "t")).toEqual([{ jobId: "d-2", since: 1 }])
      expect((yield* dao.get("d-2")).version).toBe(1)
      expect(yield* dao.getMany(["d-4"])).toEqual([Result.succeed(Option.none())])
      expect((yield* xrange("d")).map(([, fields]) => fields[1])).toEqual(["y"])
      expect((yield* everything).get(heldKey)).toEqual(before.get(heldKey))
    }).pipe(Effect.provide(services))
  )

  it.effect("records every applied event of a job, each for the event lifetime", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const valkey = yield* Valkey
      const events = [
        { source: "station|1", id: "e:1" },
        { source: "station|2", id: "e:2" }
      ]
      const results = yield* dao.compareAndSetMany([job("e-1", "e", 0, { appliedEvents: events }), job("e-2", "e", 0, { appliedEvents: [] })])
      expect(results.map(summary)).toEqual([1, 1])
      for (const event of events) {
        expect(yield* dao.eventApplied("e", event.source, event.id)).toEqual(Option.some("e-1"))
        const key = yield* valkey.key("sfcEvent", { scope: "e", ...event })
        const ttl = yield* unsafeCommand(valkey, "pttl", (c) => c.pttl(key))
        expect(ttl).toBeGreaterThan(3_500_000)
        expect(ttl).toBeLessThanOrEqual(3_600_000)
      }
      // Applied again, by the same job or another: each names the event that was held first.
      const again = yield* dao.compareAndSetMany([job("e-3", "e", 0, { appliedEvents: [{ source: "x", id: "fresh" }, events[1]!, events[0]!] })])
      expect(Result.flip(again[0]!)).toEqual(Result.succeed(expect.objectContaining({ eventIndex: 1, jobId: "e-1" })))
    }).pipe(Effect.provide(services))
  )

  it.effect("a key of the wrong type refuses only the job that names it", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const valkey = yield* Valkey
      yield* dao.compareAndSet(casWith("t-1", "t", 0, state(1)))
      const waits = yield* valkey.key("sfcWaits", { scope: "t", typeId: "broken" })
      const due = yield* valkey.key("sfcDue", { scope: "t-bad" })
      yield* unsafeCommand(valkey, "corrupt", (c) => c.set(waits, "not a zset").then(() => c.sadd(due, "x")))
      const results = yield* dao.compareAndSetMany([
        job("t-1", "t", 1, { entries: [{ type: "x" }], waitsAdd: [{ typeId: "broken", since: 1 }] }),
        job("t-2", "t-bad", 0, { due: 5 }),
        job("t-3", "t", 0, { entries: [{ type: "ok" }], waitsAdd: [{ typeId: "fine", since: 1 }] })
      ])
      expect(results.map(summary)).toEqual(["WrongType", "WrongType", 1])
      expect(Result.flip(results[0]!)).toEqual(Result.succeed(expect.objectContaining({ key: waits, actual: "string", expected: "zset" })))
      expect(Result.flip(results[1]!)).toEqual(Result.succeed(expect.objectContaining({ key: due, actual: "set", expected: "zset" })))
      expect((yield* dao.get("t-1")).version).toBe(1)
      expect((yield* xrange("t")).map(([, fields]) => fields[1])).toEqual(["ok"])
      expect(yield* dao.waiting("t", "fine")).toEqual([{ jobId: "t-3", since: 1 }])
    }).pipe(Effect.provide(services))
  )

  it.effect("a scope key of the wrong type refuses every job of that scope in the call (a key found right is asked once)", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const valkey = yield* Valkey
      const active = yield* valkey.key("sfcActive", { scope: "u-bad" })
      yield* unsafeCommand(valkey, "corrupt", (c) => c.set(active, "not a set"))
      const results = yield* dao.compareAndSetMany([
        job("u-1", "u-ok", 0, { due: 5 }),
        job("u-2", "u-bad", 0, { due: 5 }),
        job("u-3", "u-ok", 0, { due: 6 }),
        job("u-4", "u-bad", 0, { due: 6 })
      ])
      expect(results.map(summary)).toEqual([1, "WrongType", 1, "WrongType"])
      expect(Result.flip(results[3]!)).toEqual(Result.succeed(expect.objectContaining({ key: active, actual: "string", expected: "set" })))
    }).pipe(Effect.provide(services))
  )

  it.effect("an item that applies the same event twice is InvalidInput and is not sent (it would apply the event twice)", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const event = { source: "urn:s", id: "twice" }
      const results = yield* dao.compareAndSetMany([job("x-1", "x", 0, { appliedEvents: [event, { source: "urn:s", id: "other" }, event] }), job("x-2", "x", 0)])
      expect(results.map(summary)).toEqual(["InvalidInput", 1])
      expect(Result.flip(results[0]!)).toEqual(Result.succeed(expect.objectContaining({ field: "appliedEvents[2]" })))
      expect((yield* Effect.flip(dao.get("x-1")))._tag).toBe("NotFound")
      expect(yield* dao.eventApplied("x", "urn:s", "twice")).toEqual(Option.none())
    }).pipe(Effect.provide(services))
  )

  it.effect("refuses invalid items with InvalidInput naming the problem, without sending them; the valid ones are written", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const valkey = yield* Valkey
      const bad: ReadonlyArray<readonly [string, Partial<SfcCompareAndSetMany>]> = [
        ["doc", { doc: "{not json" }],
        ["doc", { doc: JSON.stringify({ big: "x".repeat(valkey.maxDocumentBytes) }) }],
        ["jobId", { jobId: "" }],
        ["scope", { scope: "x".repeat(600) }],
        ["expectedVersion", { expectedVersion: -1 }],
        ["due", { due: Number.NaN }],
        ["op", { op: "" }],
        ["entries[0]", { entries: [{ jobId: "no type" }] }],
        ["entries", { entries: [{ type: "x", blob: "y".repeat(valkey.maxDocumentBytes) }] }],
        ["waitsAdd[0].since", { waitsAdd: [{ typeId: "t", since: Number.POSITIVE_INFINITY }] }],
        ["waitsRemove", { waitsAdd: [{ typeId: "t", since: 1 }], waitsRemove: ["t"] }],
        ["waitsMove", { waitsMove: [{ typeId: "t", since: 1 }], waitsRemove: ["t"] }],
        ["directSend.pointerTtlMs", { directSend: { correlationIds: ["c"], pointerTtlMs: 0, readJobOrder: false } }],
        ["source", { appliedEvents: [{ source: "ok", id: "1" }, { source: "", id: "2" }] }],
        ["id", { appliedEvents: [{ source: "s", id: "\ud800" }] }],
        ["appliedEvents", { appliedEvents: "e-1" as never }],
        ["appliedEvents[0]", { appliedEvents: [null as never] }]
      ]
      const before = yield* everything
      const inputs = [job("i-ok-1", "i", 0), ...bad.map(([, override], n) => job(`i-bad-${n}`, "i", 0, { entries: [{ type: "x" }], ...override })), job("i-ok-2", "i", 0)]
      const results = yield* dao.compareAndSetMany(inputs)
      expect(results.map(summary)).toEqual([1, ...bad.map(() => "InvalidInput"), 1])
      bad.forEach(([field], n) => expect(Result.flip(results[n + 1]!), field).toEqual(Result.succeed(expect.objectContaining({ _tag: "InvalidInput", field }))))
      // Only the two valid jobs were written: no entry, state or event of a refused one.
      expect(yield* xrange("i")).toEqual([])
      expect([...(yield* dao.listActive("i"))].sort()).toEqual(["i-ok-1", "i-ok-2"])
      expect(yield* dao.eventApplied("i", "ok", "1")).toEqual(Option.none())
      expect((yield* everything).size).toBe(before.size + 3)
    }).pipe(Effect.provide(services))
  )

  it.effect("a job id named twice is InvalidInput for each of its items, none sent; an empty batch sends nothing", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      let scripts = 0
      const script: typeof valkey.script = (descriptor, keys, args) =>
        Effect.suspend(() => {
          scripts++
          return valkey.script(descriptor, keys, args)
        })
      const counting = { ...valkey, script }
      const dao = yield* Effect.provide(SfcStateDao.make, Layer.succeed(Valkey, counting))
      expect(yield* dao.compareAndSetMany([])).toEqual([])
      expect(scripts).toBe(0)
      const results = yield* dao.compareAndSetMany([job("r-1", "r", 0), job("r-2", "r", 0), job("r-1", "r", 0, { entries: [{ type: "x" }] })])
      expect(results.map(summary)).toEqual(["InvalidInput", 1, "InvalidInput"])
      expect(Result.flip(results[0]!)).toEqual(Result.succeed(expect.objectContaining({ field: "jobId", message: expect.stringContaining("r-1") })))
      expect(scripts).toBe(1)
      expect(yield* dao.getMany(["r-1"])).toEqual([Result.succeed(Option.none())])
      // Nothing valid at all: nothing sent.
      expect((yield* dao.compareAndSetMany([job("r-3", "r", 0, { doc: "{" })])).map(summary)).toEqual(["InvalidInput"])
      expect(scripts).toBe(1)
    }).pipe(Effect.provide(services))
  )

  it.live("publishes one nudge per scope whose jobs appended nudging entries", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const valkey = yield* Valkey
      const channel = yield* valkey.key("nudge", { kind: "sfc" })
      const messages = yield* Queue.unbounded<string>()
      const subscriber = yield* dedicated(valkey, "sfc-many-nudge-test")
      subscriber.on("message", (_: string, message: string) => Queue.offerUnsafe(messages, message))
      yield* Effect.promise(() => subscriber.subscribe(channel))
      const entry = [{ type: "command" }]
      const results = yield* dao.compareAndSetMany([
        job("n-1", "n-a", 0, { entries: entry }),
        job("n-2", "n-b", 0, { entries: entry }),
        job("n-3", "n-a", 0, { entries: entry }),
        job("n-4", "n-quiet", 0, { entries: entry, nudge: false }),
        job("n-5", "n-none", 0),
        job("n-6", "n-refused", 3, { entries: entry }),
        job("n-7", "n-b", 0, { entries: entry })
      ])
      expect(results.map(summary)).toEqual([1, 1, 1, 1, 1, "VersionConflict", 1])
      // Pub/sub keeps the order of one publisher: the marker comes after whatever the batch published.
      yield* dao.compareAndSet(casWith("n-marker", "n-end", 0, "{}", { entries: entry }))
      const seen: Array<string> = []
      while (seen.at(-1) !== "n-end") seen.push(yield* Queue.take(messages))
      expect(seen).toEqual(["n-a", "n-b", "n-end"])
    }).pipe(Effect.scoped, Effect.provide(services))
  )
})
