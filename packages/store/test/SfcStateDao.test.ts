import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Option, Queue } from "effect"
import fc from "fast-check"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { type SfcCompareAndSet, SfcStateDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { casWith, snapshotOf, xrange } from "./SfcStateKit.js"
import { dedicated } from "../src/RawDoor.js"

const prefix = randomPrefix()
const services = SfcStateDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

const state = (step: string) => JSON.stringify({ status: "running", step })

/** A CAS with nothing but the state; tests override what they exercise. */
const cas = (jobId: string, scope: string, expectedVersion: number, extra: Partial<SfcCompareAndSet> = {}): SfcCompareAndSet =>
  casWith(jobId, scope, expectedVersion, state(`v${expectedVersion + 1}`), extra)

const everything = snapshotOf(prefix)

describe("SfcStateDao", () => {
  it.effect("creates, updates and reads; appends entries with their ids; keeps due, active and waits", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const created = yield* dao.compareAndSet(
        cas("job-1", "s1", 0, {
          entries: [{ type: "joborder", jobId: "job-1", v: "1" }, { type: "command", correlation: "job-1:a:1" }],
          due: 5_000,
          waitsAdd: [{ typeId: "scan", since: 100 }]
        })
      )
      expect(created.version).toBe(1)
      expect(created.entryIds).toHaveLength(2)
      const entries = yield* xrange("s1")
      expect(entries.map(([id]) => id)).toEqual(created.entryIds)
      expect(entries[0]![1]).toEqual(["type", "joborder", "jobId", "job-1", "v", "1"])
      expect(yield* dao.get("job-1")).toMatchObject({ id: "job-1", scope: "s1", version: 1, op: created.op, doc: state("v1") })
      expect(yield* dao.listActive("s1")).toEqual(["job-1"])
      expect(yield* dao.due("s1", 4_999, 10)).toEqual([])
      expect(yield* dao.due("s1", 5_000, 10)).toEqual([{ jobId: "job-1", due: 5_000 }])
      expect(yield* dao.waiting("s1", "scan")).toEqual([{ jobId: "job-1", since: 100 }])

      // The wait start is kept when the job is named again (NX); then it finishes and leaves everything.
      const again = yield* dao.compareAndSet(cas("job-1", "s1", 1, { due: 6_000, waitsAdd: [{ typeId: "scan", since: 999 }] }))
      expect(again).toMatchObject({ version: 2, entryIds: [] })
      expect(yield* dao.waiting("s1", "scan")).toEqual([{ jobId: "job-1", since: 100 }])
      const finished = yield* dao.compareAndSet(cas("job-1", "s1", 2, { active: false, waitsRemove: ["scan"] }))
      expect(yield* dao.outcome("job-1", finished.op)).toEqual(Option.some(3))
      expect(yield* dao.listActive("s1")).toEqual([])
      expect(yield* dao.due("s1", 1e15, 10)).toEqual([])
      expect(yield* dao.waiting("s1", "scan")).toEqual([])
      expect(yield* dao.outcome("job-1", created.op)).toEqual(Option.none())
      expect((yield* dao.get("job-1")).version).toBe(3)
    }).pipe(Effect.provide(services))
  )

  it.effect("a version conflict writes nothing: no state, work, due, active, waits or event change", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      yield* dao.compareAndSet(cas("job-c", "sc", 0, { due: 10, waitsAdd: [{ typeId: "t1", since: 1 }] }))
      const before = yield* everything
      const stale = yield* Effect.flip(
        dao.compareAndSet(
          cas("job-c", "sc", 7, {
            entries: [{ type: "command" }],
            due: 99,
            active: false,
            waitsAdd: [{ typeId: "t2", since: 5 }],
            waitsRemove: ["t1"],
            appliedEvent: { source: "station", id: "e-1" }
          })
        )
      )
      expect(stale).toMatchObject({ _tag: "VersionConflict", expected: 7, actual: 1 })
      expect(yield* everything).toEqual(before)
      expect(yield* dao.eventApplied("sc", "station", "e-1")).toEqual(Option.none())
    }).pipe(Effect.provide(services))
  )

  it.effect("create-only fails on an existing job; a version on a missing job conflicts with 0", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      yield* dao.compareAndSet(cas("job-co", "s1", 0))
      const before = yield* everything
      expect(yield* Effect.flip(dao.compareAndSet(cas("job-co", "s1", 0, { entries: [{ type: "start" }] })))).toMatchObject({
        _tag: "VersionConflict",
        expected: 0,
        actual: 1
      })
      expect(yield* Effect.flip(dao.compareAndSet(cas("job-missing", "s1", 3)))).toMatchObject({ _tag: "VersionConflict", actual: 0 })
      expect(yield* everything).toEqual(before)
    }).pipe(Effect.provide(services))
  )

  it.effect("a duplicate event writes nothing and names the job that applied it, even after the state moved on", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const event = { source: "station|7", id: "evt:1" }
      yield* dao.compareAndSet(cas("job-d", "sd", 0, { waitsAdd: [{ typeId: "done", since: 1 }] }))
      yield* dao.compareAndSet(cas("job-d", "sd", 1, { appliedEvent: event, waitsRemove: ["done"], entries: [{ type: "x" }] }))
      yield* dao.compareAndSet(cas("job-d", "sd", 2, { due: 50 }))
      expect(yield* dao.eventApplied("sd", event.source, event.id)).toEqual(Option.some("job-d"))
      const before = yield* everything
      const again = yield* Effect.flip(
        dao.compareAndSet(cas("job-d", "sd", 3, { appliedEvent: event, entries: [{ type: "x" }], active: false }))
      )
      expect(again).toMatchObject({ _tag: "DuplicateEvent", jobId: "job-d" })
      // Another job of the scope cannot apply the same event either; a stale version still says duplicate.
      const other = yield* Effect.flip(dao.compareAndSet(cas("job-d2", "sd", 0, { appliedEvent: event })))
      expect(other).toMatchObject({ _tag: "DuplicateEvent", jobId: "job-d" })
      expect(yield* Effect.flip(dao.compareAndSet(cas("job-d", "sd", 1, { appliedEvent: event })))).toMatchObject({
        _tag: "DuplicateEvent"
      })
      expect(yield* everything).toEqual(before)
      const valkey = yield* Valkey
      const key = yield* valkey.key("sfcEvent", { scope: "sd", ...event })
      const ttl = yield* unsafeCommand(valkey, "pttl", (c) => c.pttl(key))
      expect(ttl).toBeGreaterThan(3_500_000)
      expect(ttl).toBeLessThanOrEqual(3_600_000)
    }).pipe(Effect.provide(services))
  )

  it.effect("keeps the scope immutable and writes nothing in either scope", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      yield* dao.compareAndSet(cas("job-s", "home", 0))
      const before = yield* everything
      const moved = yield* Effect.flip(dao.compareAndSet(cas("job-s", "away", 1, { entries: [{ type: "x" }], due: 1 })))
      expect(moved).toMatchObject({ _tag: "ScopeConflict", storedScope: "home", requestedScope: "away" })
      expect(yield* everything).toEqual(before)
    }).pipe(Effect.provide(services))
  )

  it.effect("a WRONGTYPE index key fails the whole write before anything is written", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const valkey = yield* Valkey
      yield* dao.compareAndSet(cas("job-w", "sw", 0))
      const waits = yield* valkey.key("sfcWaits", { scope: "sw", typeId: "broken" })
      const due = yield* valkey.key("sfcDue", { scope: "sw2" })
      yield* unsafeCommand(valkey, "corrupt", (c) => c.set(waits, "not a zset").then(() => c.sadd(due, "x")))
      const before = yield* everything
      const write = cas("job-w", "sw", 1, { entries: [{ type: "x" }], due: 5, waitsAdd: [{ typeId: "broken", since: 1 }] })
      expect(yield* Effect.flip(dao.compareAndSet(write))).toMatchObject({ _tag: "WrongType", key: waits, actual: "string", expected: "zset" })
      const removing = cas("job-w", "sw", 1, { appliedEvent: { source: "s", id: "1" }, waitsRemove: ["broken"] })
      expect(yield* Effect.flip(dao.compareAndSet(removing))).toMatchObject({ _tag: "WrongType", key: waits })
      expect(yield* Effect.flip(dao.compareAndSet(cas("job-w2", "sw2", 0, { due: 1 })))).toMatchObject({
        _tag: "WrongType",
        key: due,
        actual: "set",
        expected: "zset"
      })
      expect(yield* everything).toEqual(before)
    }).pipe(Effect.provide(services))
  )

  it.live("publishes nudge:sfc with the scope when entries were appended, and only then", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const valkey = yield* Valkey
      const channel = yield* valkey.key("nudge", { kind: "sfc" })
      const messages = yield* Queue.unbounded<readonly [string, string]>()
      const subscriber = yield* dedicated(valkey, "sfc-nudge-test")
      subscriber.on("message", (ch: string, message: string) => Queue.offerUnsafe(messages, [ch, message] as const))
      yield* Effect.promise(() => subscriber.subscribe(channel))
      // Pub/sub keeps the order of one publisher: had the quiet write published, it would come first.
      yield* dao.compareAndSet(cas("job-n1", "quiet scope", 0, { due: 1 }))
      yield* dao.compareAndSet(cas("job-n2", "loud:scope|ü", 0, { entries: [{ type: "start" }] }))
      expect(yield* Queue.take(messages)).toEqual([channel, "loud:scope|ü"])
    }).pipe(Effect.scoped, Effect.provide(services))
  )

  it.effect("nudge false appends the entries without publishing; the fallback poll is what reads them", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const valkey = yield* Valkey
      const channel = yield* valkey.key("nudge", { kind: "sfc" })
      const messages = yield* Queue.unbounded<readonly [string, string]>()
      const subscriber = yield* dedicated(valkey, "sfc-quiet-nudge-test")
      subscriber.on("message", (ch: string, message: string) => Queue.offerUnsafe(messages, [ch, message] as const))
      yield* Effect.promise(() => subscriber.subscribe(channel))
      const quiet = yield* dao.compareAndSet({ ...cas("job-q1", "quiet-entries", 0, { entries: [{ type: "command" }] }), nudge: false })
      expect(quiet.entryIds).toHaveLength(1)
      yield* dao.compareAndSet(cas("job-q2", "nudged-entries", 0, { entries: [{ type: "command" }] }))
      // Pub/sub keeps the order of one publisher: had the quiet write published, it would come first.
      expect(yield* Queue.take(messages)).toEqual([channel, "nudged-entries"])
      const work = yield* valkey.key("sfcWork", { scope: "quiet-entries" })
      expect(yield* unsafeCommand(valkey, "xlen", (c) => c.xlen(work))).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(services))
  )

  it.effect("deletes the state and every index entry it names", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      yield* dao.compareAndSet(
        cas("job-x", "sx", 0, { due: 10, waitsAdd: [{ typeId: "a", since: 1 }, { typeId: "b", since: 2 }], entries: [{ type: "start" }] })
      )
      yield* dao.compareAndSet(cas("job-y", "sx", 0, { due: 11, waitsAdd: [{ typeId: "a", since: 3 }] }))
      expect(yield* Effect.flip(dao.delete({ jobId: "job-x", waits: ["a", "b"], expectedVersion: 4 }))).toMatchObject({
        _tag: "VersionConflict",
        actual: 1
      })
      expect(yield* dao.delete({ jobId: "job-x", waits: ["a", "b"] })).toEqual({ version: 1 })
      expect((yield* Effect.flip(dao.get("job-x")))._tag).toBe("NotFound")
      expect(yield* dao.listActive("sx")).toEqual(["job-y"])
      expect(yield* dao.due("sx", 1e15, 10)).toEqual([{ jobId: "job-y", due: 11 }])
      expect(yield* dao.waiting("sx", "a")).toEqual([{ jobId: "job-y", since: 3 }])
      expect(yield* dao.waiting("sx", "b")).toEqual([])
      expect(yield* xrange("sx")).toHaveLength(1)
      expect((yield* Effect.flip(dao.delete({ jobId: "job-x", waits: [] })))._tag).toBe("NotFound")
      // Created again after a delete, it starts over at version 1.
      expect((yield* dao.compareAndSet(cas("job-x", "sx", 0))).version).toBe(1)
    }).pipe(Effect.provide(services))
  )

  it.effect("handles ids, scopes and type ids with ':', '|', '%', spaces and non-ASCII", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const scope = "line 1:cell|2%ß"
      const jobs = ["job:1|a%20b c", "jöb 2:東京", "plain"]
      const typeId = "ns:type|v1 %x é"
      for (const [i, jobId] of jobs.entries()) {
        yield* dao.compareAndSet(
          cas(jobId, scope, 0, { due: 100 + i, waitsAdd: [{ typeId, since: 10 - i }], appliedEvent: { source: "src:|%", id: `${jobId} é` } })
        )
      }
      expect([...(yield* dao.listActive(scope))].sort()).toEqual([...jobs].sort())
      expect(yield* dao.due(scope, 101, 10)).toEqual([{ jobId: jobs[0], due: 100 }, { jobId: jobs[1], due: 101 }])
      expect(yield* dao.due(scope, 1e15, 1)).toEqual([{ jobId: jobs[0], due: 100 }])
      expect((yield* dao.waiting(scope, typeId)).map((w) => w.jobId)).toEqual([...jobs].reverse())
      expect(yield* dao.waiting(scope, typeId, 1)).toEqual([{ jobId: "plain", since: 8 }])
      expect(yield* dao.eventApplied(scope, "src:|%", `${jobs[1]} é`)).toEqual(Option.some(jobs[1]))
      expect((yield* dao.get(jobs[1]!)).scope).toBe(scope)
      // Parts are encoded, so this scope's keys are not those of the scope "line 1".
      expect(yield* dao.listActive("line 1")).toEqual([])
    }).pipe(Effect.provide(services))
  )

  it.effect("rejects bad input with InvalidInput and writes nothing", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const valkey = yield* Valkey
      yield* dao.compareAndSet(cas("job-b", "sb", 0))
      const before = yield* everything
      const bad: ReadonlyArray<readonly [string, Partial<SfcCompareAndSet>]> = [
        ["doc", { doc: "{not json" }],
        ["doc", { doc: JSON.stringify({ big: "x".repeat(valkey.maxDocumentBytes) }) }],
        ["jobId", { jobId: "" }],
        ["scope", { scope: "x".repeat(600) }],
        ["expectedVersion", { expectedVersion: -1 }],
        ["expectedVersion", { expectedVersion: 1.5 }],
        ["due", { due: Number.NaN }],
        ["op", { op: "" }],
        ["entries[0]", { entries: [{ jobId: "job-b" }] }],
        ["entries[1]", { entries: [{ type: "ok" }, { type: "x", "": "empty name" }] }],
        ["entries[0]", { entries: [{ type: "x", n: 1 as unknown as string }] }],
        ["entries", { entries: [{ type: "x", blob: "y".repeat(valkey.maxDocumentBytes) }] }],
        ["waitsAdd[0].typeId", { waitsAdd: [{ typeId: "", since: 1 }] }],
        ["waitsAdd[0].since", { waitsAdd: [{ typeId: "t", since: Number.POSITIVE_INFINITY }] }],
        ["waitsRemove", { waitsAdd: [{ typeId: "t", since: 1 }], waitsRemove: ["t"] }],
        ["source", { appliedEvent: { source: "", id: "1" } }],
        ["id", { appliedEvent: { source: "s", id: "\ud800" } }]
      ]
      for (const [field, override] of bad) {
        const error = yield* Effect.flip(dao.compareAndSet(cas("job-b", "sb", 1, { entries: [{ type: "x" }], due: 1, ...override })))
        expect(error, JSON.stringify(Object.keys(override))).toMatchObject({ _tag: "InvalidInput", field })
      }
      expect((yield* Effect.flip(dao.due("sb", Number.NaN, 10)))._tag).toBe("InvalidInput")
      expect((yield* Effect.flip(dao.due("sb", 1, 0)))._tag).toBe("InvalidInput")
      expect((yield* Effect.flip(dao.delete({ jobId: "job-b", waits: [""] })))._tag).toBe("InvalidInput")
      expect((yield* Effect.flip(dao.delete({ jobId: "job-b", waits: [], expectedVersion: 0 })))._tag).toBe("InvalidInput")
      expect(yield* everything).toEqual(before)
    }).pipe(Effect.provide(services))
  )
})

layer(services)("SfcStateDao property", (it) => {
  const typeIds = ["T1", "T:2", "T|3 é"] as const
  const step = fc.record({
    job: fc.nat(2),
    /** 0 = the right version; anything else makes the expected version stale. */
    skew: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: -2, max: 3 }) }),
    due: fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: null }),
    active: fc.boolean(),
    waits: fc.tuple(...typeIds.map(() => fc.constantFrom("add", "remove", "keep" as const))),
    since: fc.integer({ min: 0, max: 1_000_000 }),
    entries: fc.nat(2)
  })

  interface Model {
    readonly versions: Map<string, number>
    readonly due: Map<string, number>
    readonly active: Set<string>
    readonly waits: ReadonlyArray<Map<string, number>>
    entries: number
  }

  let run = 0

  it.effect("after random CAS sequences (some stale) due, active and waits equal a simple model", () =>
    Effect.gen(function* () {
      const dao = yield* SfcStateDao
      const runtime = yield* Effect.context<SfcStateDao | Valkey>()
      const check = (steps: ReadonlyArray<typeof step extends fc.Arbitrary<infer T> ? T : never>) =>
        Effect.gen(function* () {
          run += 1
          const scope = `prop ${run}:ü|%`
          const jobIds = [0, 1, 2].map((j) => `job ${run}:${j}|%`)
          const model: Model = { versions: new Map(), due: new Map(), active: new Set(), waits: typeIds.map(() => new Map()), entries: 0 }
          for (const s of steps) {
            const jobId = jobIds[s.job]!
            const current = model.versions.get(jobId) ?? 0
            // A stale version: the skewed one, or one ahead when skewing would go below 0.
            const expected = s.skew !== 0 && current + s.skew < 0 ? current + 1 : current + s.skew
            const write = cas(jobId, scope, expected, {
              due: s.due,
              active: s.active,
              entries: Array.from({ length: s.entries }, (_, i) => ({ type: "command", n: String(i) })),
              waitsAdd: typeIds.flatMap((typeId, i) => (s.waits[i] === "add" ? [{ typeId, since: s.since }] : [])),
              waitsRemove: typeIds.filter((_, i) => s.waits[i] === "remove")
            })
            const result = yield* Effect.result(dao.compareAndSet(write))
            if (expected !== current) {
              expect(result).toMatchObject({ _tag: "Failure", failure: { _tag: "VersionConflict", actual: current } })
              continue
            }
            expect(result).toMatchObject({ _tag: "Success", success: { version: current + 1 } })
            model.versions.set(jobId, current + 1)
            if (s.due === null) model.due.delete(jobId)
            else model.due.set(jobId, s.due)
            if (s.active) model.active.add(jobId)
            else model.active.delete(jobId)
            typeIds.forEach((_, i) => {
              const set = model.waits[i]!
              if (s.waits[i] === "add" && !set.has(jobId)) set.set(jobId, s.since)
              if (s.waits[i] === "remove") set.delete(jobId)
            })
            model.entries += s.entries
          }
          const byJob = (a: { jobId: string }, b: { jobId: string }) => (a.jobId < b.jobId ? -1 : 1)
          const due = [...(yield* dao.due(scope, Number.MAX_SAFE_INTEGER, 100))].sort(byJob)
          expect(due).toEqual([...model.due].map(([jobId, d]) => ({ jobId, due: d })).sort(byJob))
          expect([...(yield* dao.listActive(scope))].sort()).toEqual([...model.active].sort())
          for (const [i, typeId] of typeIds.entries()) {
            const waiting = [...(yield* dao.waiting(scope, typeId))].sort(byJob)
            expect(waiting).toEqual([...model.waits[i]!].map(([jobId, since]) => ({ jobId, since })).sort(byJob))
          }
          expect(yield* xrange(scope)).toHaveLength(model.entries)
          for (const jobId of jobIds) {
            const stored = yield* Effect.result(dao.get(jobId))
            const version = model.versions.get(jobId)
            if (version === undefined) expect(stored._tag).toBe("Failure")
            else expect(stored).toMatchObject({ _tag: "Success", success: { version, scope } })
          }
        })
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(step, { maxLength: 20 }), (steps) => Effect.runPromiseWith(runtime)(check(steps))),
          { numRuns: 100 }
        )
      )
    })
  )
})
