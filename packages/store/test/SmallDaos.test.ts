import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Layer, Option, Stream } from "effect"
import type { Redis } from "iovalkey"
import { inject } from "vitest"
import type { KeyFamily, KeyParts } from "@microdcs/keyschema"
import { randomPrefix } from "@microdcs/test-utils"
import {
  ConsumerHeartbeats,
  DedupeEntries,
  DedupeState,
  DedupeStore,
  IndexScores,
  JobOrderRetention,
  LeaseOverview,
  Nudges,
  PublisherCursors,
  PublisherLease,
  ScopeFiguresReader,
  ScopeSizes,
  SfcCorrelations,
  SfcHeartbeat,
  StartLease,
  StoreHealth,
  StreamSummaries,
  Valkey,
  ValkeyLayer
} from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

// Issue 10, item 5: the keys that had no DAO (correlation pointers, the sweep heartbeat, the
// dedupe value format, per-scope sizes, ...) each get a small DAO with typed errors, tested
// here against the real server.

const layerFor = (prefix: string) =>
  Layer.mergeAll(
    SfcCorrelations.Default,
    SfcHeartbeat.Default,
    DedupeEntries.Default,
    DedupeStore.Default,
    ScopeSizes.Default,
    ScopeFiguresReader.Default,
    StreamSummaries.Default,
    IndexScores.Default,
    ConsumerHeartbeats.Default,
    Nudges.Default,
    JobOrderRetention.Default,
    LeaseOverview.Default,
    StartLease.Default,
    PublisherLease.Default,
    PublisherCursors.Default,
    StoreHealth.Default
  ).pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

/** Runs `test` on a prefix of its own. */
const onFreshPrefix = <A, E>(test: (prefix: string) => Effect.Effect<A, E, Layer.Success<ReturnType<typeof layerFor>>>) => {
  const prefix = randomPrefix("small")
  return test(prefix).pipe(Effect.provide(layerFor(prefix)))
}

/** Raw access for the test's own setup and checks (corrupting keys, reading what was written). */
const raw = <A>(run: (c: Redis) => Promise<A>) => Effect.flatMap(Valkey, (valkey) => unsafeCommand(valkey, "test setup", run))

const keysOf = (prefix: string) => raw((c) => c.keys(`${prefix}:*`))

const expectFailure = <A, E>(call: Effect.Effect<A, E>, expected: Record<string, unknown>) =>
  Effect.gen(function* () {
    // Effect.flip fails the test with the defect itself if the call dies instead of failing.
    expect(yield* Effect.flip(call)).toMatchObject(expected)
  })

const keyOf = <F extends KeyFamily>(family: F, parts: KeyParts<F>) => Effect.flatMap(Valkey, (valkey) => Effect.orDie(valkey.key(family, parts)))

describe("SfcCorrelations", () => {
  it.effect("remembers which job sent a command, with a lifetime, and forgets it", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const correlations = yield* SfcCorrelations
        expect(yield* correlations.jobOf("c-1")).toEqual(Option.none())
        yield* correlations.remember("c-1", "job:1", 60_000)
        expect(yield* correlations.jobOf("c-1")).toEqual(Option.some("job:1"))
        const key = yield* keyOf("sfcCorrelation", { correlationId: "c-1" })
        const ttl = yield* raw<number>((c) => c.pttl(key))
        expect(ttl).toBeGreaterThan(0)
        expect(ttl).toBeLessThanOrEqual(60_000)
        expect(yield* correlations.forget("c-1")).toBe(true)
        expect(yield* correlations.forget("c-1")).toBe(false)
        expect(yield* correlations.jobOf("c-1")).toEqual(Option.none())
      })
    )
  )

  it.effect("a pointer key of another type is WrongType, and stays", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const correlations = yield* SfcCorrelations
        const key = yield* keyOf("sfcCorrelation", { correlationId: "c-bad" })
        yield* raw((c) => c.hset(key, "f", "v"))
        yield* expectFailure(correlations.jobOf("c-bad"), { _tag: "WrongType", key, expected: "string", actual: "hash" })
        expect(yield* raw((c) => c.type(key))).toBe("hash")
      })
    )
  )

  it.effect("bad input is InvalidInput and writes nothing", () =>
    onFreshPrefix((prefix) =>
      Effect.gen(function* () {
        const correlations = yield* SfcCorrelations
        yield* expectFailure(correlations.remember("", "job", 1000), { _tag: "InvalidInput", field: "correlationId" })
        yield* expectFailure(correlations.remember("c", "", 1000), { _tag: "InvalidInput", field: "jobId" })
        yield* expectFailure(correlations.remember("c", "job", 0), { _tag: "InvalidInput", field: "ttlMs" })
        yield* expectFailure(correlations.remember("c", "job", 1.5), { _tag: "InvalidInput", field: "ttlMs" })
        yield* expectFailure(correlations.jobOf("x\uD800"), { _tag: "InvalidInput", field: "correlationId" })
        yield* expectFailure(correlations.forget(""), { _tag: "InvalidInput", field: "correlationId" })
        expect(yield* keysOf(prefix)).toEqual([])
      })
    )
  )
})

describe("SfcHeartbeat", () => {
  it.effect("swaps in a new beat and returns the one it replaced", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const heartbeat = yield* SfcHeartbeat
        expect(yield* heartbeat.last).toEqual(Option.none())
        expect(yield* heartbeat.swap(1_700_000_000_000)).toEqual(Option.none())
        expect(yield* heartbeat.swap(1_700_000_001_000)).toEqual(Option.some(1_700_000_000_000))
        expect(yield* heartbeat.last).toEqual(Option.some(1_700_000_001_000))
      })
    )
  )

  it.effect("of concurrent swaps, exactly one sees each earlier beat", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const heartbeat = yield* SfcHeartbeat
        yield* heartbeat.swap(1)
        const seen = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => heartbeat.swap(100 + i)),
          { concurrency: "unbounded" }
        )
        const previous = seen.map(Option.getOrThrow)
        expect(new Set(previous).size).toBe(10)
        expect(previous).toContain(1)
      })
    )
  )

  it.effect("a value that is no epoch ms counts as no beat; a key of another type is WrongType", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const heartbeat = yield* SfcHeartbeat
        const key = yield* keyOf("sfcHeartbeat", {})
        yield* raw((c) => c.set(key, "yesterday"))
        expect(yield* heartbeat.last).toEqual(Option.none())
        expect(yield* heartbeat.swap(5)).toEqual(Option.none())
        yield* raw((c) => c.del(key).then(() => c.rpush(key, "x")))
        yield* expectFailure(heartbeat.last, { _tag: "WrongType", key, expected: "string", actual: "list" })
        yield* expectFailure(heartbeat.swap(6), { _tag: "WrongType", key, expected: "string", actual: "list" })
        expect(yield* raw((c) => c.type(key))).toBe("list")
      })
    )
  )

  it.effect("a beat that is no epoch ms is InvalidInput and writes nothing", () =>
    onFreshPrefix((prefix) =>
      Effect.gen(function* () {
        const heartbeat = yield* SfcHeartbeat
        for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
          yield* expectFailure(heartbeat.swap(bad), { _tag: "InvalidInput", field: "now" })
        }
        expect(yield* keysOf(prefix)).toEqual([])
      })
    )
  )
})

describe("DedupeEntries", () => {
  it.effect("decodes every state the dedupe scripts write, with the time left", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const entries = yield* DedupeEntries
        const dedupe = yield* DedupeStore
        const absent = yield* entries.inspect("plant/a", "ev-1")
        expect(absent).toMatchObject({ state: DedupeState.Absent(), remainingMs: 0 })
        yield* dedupe.claim("plant/a", "ev-1", "token-1", 60_000)
        const processing = yield* entries.inspect("plant/a", "ev-1")
        expect(processing.state).toEqual(DedupeState.Processing({ token: "token-1" }))
        expect(processing.key).toBe(absent.key)
        expect(processing.remainingMs).toBeGreaterThan(0)
        yield* dedupe.markDone("plant/a", "ev-1", "token-1", 120_000)
        expect((yield* entries.inspect("plant/a", "ev-1")).state).toEqual(DedupeState.Done({ reply: undefined }))
        yield* dedupe.claim("plant/a", "ev-2", "token-2", 60_000)
        yield* dedupe.markDone("plant/a", "ev-2", "token-2", 120_000, `{"ok":true}`)
        expect((yield* entries.inspect("plant/a", "ev-2")).state).toEqual(DedupeState.Done({ reply: `{"ok":true}` }))
        yield* raw((c) => c.set(absent.key, "garbled"))
        expect(yield* entries.inspect("plant/a", "ev-1")).toMatchObject({ state: DedupeState.Unknown({ value: "garbled" }), remainingMs: 0 })
      })
    )
  )

  it.effect("forgets an entry so a redelivery is processed again; a missing one is false", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const entries = yield* DedupeEntries
        const dedupe = yield* DedupeStore
        yield* dedupe.claim("s", "e", "t", 60_000)
        yield* dedupe.markDone("s", "e", "t", 60_000)
        expect(yield* entries.forget("s", "e")).toBe(true)
        expect((yield* entries.inspect("s", "e")).state).toEqual(DedupeState.Absent())
        expect(yield* entries.forget("s", "e")).toBe(false)
        expect((yield* dedupe.claim("s", "e", "t2", 60_000))._tag).toBe("Claimed")
      })
    )
  )

  it.effect("a dedupe key of another type is WrongType for inspect and forget, and stays", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const entries = yield* DedupeEntries
        const { key } = yield* entries.inspect("s", "wt")
        yield* raw((c) => c.sadd(key, "x"))
        yield* expectFailure(entries.inspect("s", "wt"), { _tag: "WrongType", key, expected: "string", actual: "set" })
        yield* expectFailure(entries.forget("s", "wt"), { _tag: "WrongType", key, expected: "string", actual: "set" })
        expect(yield* raw((c) => c.type(key))).toBe("set")
      })
    )
  )

  it.effect("bad input is InvalidInput and changes nothing", () =>
    onFreshPrefix((prefix) =>
      Effect.gen(function* () {
        const entries = yield* DedupeEntries
        const dedupe = yield* DedupeStore
        yield* dedupe.claim("s", "kept", "t", 60_000)
        const before = yield* keysOf(prefix)
        yield* expectFailure(entries.inspect("", "e"), { _tag: "InvalidInput", field: "source" })
        yield* expectFailure(entries.inspect("s", "x".repeat(513)), { _tag: "InvalidInput", field: "id" })
        yield* expectFailure(entries.forget("s\uDC00", "e"), { _tag: "InvalidInput", field: "source" })
        yield* expectFailure(entries.forget("s", ""), { _tag: "InvalidInput", field: "id" })
        expect(yield* keysOf(prefix)).toEqual(before)
      })
    )
  )
})

describe("ScopeSizes", () => {
  it.effect("counts each scope's lists and streams in one round trip; a wrong-typed key shows as null", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const sizes = yield* ScopeSizes
        const k = {
          orders: yield* keyOf("jobOrderList", { scope: "a" }),
          responses: yield* keyOf("jobResponseList", { scope: "a" }),
          masters: yield* keyOf("workMasterList", { scope: "a" }),
          active: yield* keyOf("sfcActive", { scope: "a" }),
          changes: yield* keyOf("changes", { scope: "a" }),
          work: yield* keyOf("sfcWork", { scope: "a" }),
          otherOrders: yield* keyOf("jobOrderList", { scope: "b" })
        }
        yield* raw((c) =>
          Promise.all([
            c.zadd(k.orders, 1, "o1", 2, "o2"),
            c.zadd(k.responses, 0, "r1"),
            c.sadd(k.masters, "w1", "w2", "w3"),
            c.sadd(k.active, "j1"),
            c.xadd(k.changes, "*", "kind", "joborder"),
            c.xadd(k.work, "*", "t", "x"),
            c.xadd(k.work, "*", "t", "y"),
            c.set(k.otherOrders, "corrupt")
          ])
        )
        expect(yield* sizes.sizes([])).toEqual([])
        expect(yield* sizes.sizes(["a", "b", "empty"])).toEqual([
          { scope: "a", jobOrders: 2, jobResponses: 1, workMasters: 3, activeExecutions: 1, changes: 1, sfcWork: 2 },
          { scope: "b", jobOrders: null, jobResponses: 0, workMasters: 0, activeExecutions: 0, changes: 0, sfcWork: 0 },
          { scope: "empty", jobOrders: 0, jobResponses: 0, workMasters: 0, activeExecutions: 0, changes: 0, sfcWork: 0 }
        ])
      })
    )
  )

  it.effect("a scope no key can be built for is InvalidInput", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        yield* expectFailure((yield* ScopeSizes).sizes(["ok", ""]), { _tag: "InvalidInput", field: "scope" })
      })
    )
  )
})

describe("ScopeFiguresReader", () => {
  it.effect("reads stream lengths, groups, dead letters of every scope stream (the commit stream's too), list and by-state counts; a wrong-typed key counts 0", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const reader = yield* ScopeFiguresReader
        const work = yield* keyOf("sfcWork", { scope: "a" })
        const dead = yield* keyOf("deadLetterStream", { kind: "sfc", scope: "a" })
        const commits = yield* keyOf("executionLogCommits", { scope: "a" })
        const deadCommits = yield* keyOf("deadLetterStream", { kind: "dagcommit", scope: "a" })
        const list = yield* keyOf("jobOrderList", { scope: "a" })
        const completed = yield* keyOf("jobResponseByState", { scope: "a", state: "Ended_Completed" })
        const active = yield* keyOf("sfcActive", { scope: "a" })
        yield* raw((c) =>
          Promise.all([
            c.xadd(work, "*", "t", "1"),
            c.xadd(work, "*", "t", "2"),
            c.xgroup("CREATE", work, "engine", "0"),
            c.xadd(dead, "*", "t", "1"),
            c.xadd(commits, "*", "keys", "[]"),
            c.xadd(deadCommits, "*", "t", "1"),
            c.xadd(deadCommits, "*", "t", "2"),
            c.zadd(list, 5, "o1"),
            c.sadd(completed, "r1", "r2"),
            c.set(active, "corrupt")
          ])
        )
        const [a] = yield* reader.figures(["a"], ["Ended_Completed", "Aborted"])
        expect(a).toEqual({
          scope: "a",
          streamLength: { changes: 0, sfc: 2, dagcommit: 1 },
          deadLetters: { changes: 0, sfc: 1, dagcommit: 2 },
          groups: [{ stream: "sfc", scope: "a", group: "engine", lag: a!.groups[0]?.lag, pending: 0 }],
          jobOrders: 1,
          activeExecutions: 0,
          responsesByState: { Ended_Completed: 2 }
        })
        // The lag is unknown (undefined) on servers before Redis 7; where known, both entries are unread.
        expect([undefined, 2]).toContain(a!.groups[0]!.lag)
        expect(yield* reader.figures([], [])).toEqual([])
      })
    )
  )
})

describe("StreamSummaries", () => {
  it.effect("a missing stream, a stream with a group, and a key of another type", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const summaries = yield* StreamSummaries
        const stream = yield* keyOf("changes", { scope: "a" })
        const other = yield* keyOf("changes", { scope: "b" })
        expect(yield* summaries.summary(stream)).toEqual({ key: stream, type: "none", length: 0, firstId: null, lastId: null, groups: [] })
        yield* raw((c) => c.xadd(stream, "1-1", "f", "v").then(() => c.xadd(stream, "2-1", "f", "v")).then(() => c.xgroup("CREATE", stream, "pub", "1-1")))
        yield* raw((c) => c.hset(other, "f", "v"))
        const summary = yield* summaries.summary(stream)
        expect(summary).toMatchObject({ key: stream, type: "stream", length: 2, firstId: "1-1", lastId: "2-1" })
        expect(summary.groups).toEqual([expect.objectContaining({ group: "pub", consumers: 0, pending: 0, lastDeliveredId: "1-1" })])
        expect(yield* summaries.summary(other)).toMatchObject({ type: "hash", length: 0, groups: [] })
      })
    )
  )
})

describe("IndexScores", () => {
  it.effect("a member's score in a scope index, none when it is not listed; WrongType and InvalidInput", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const scores = yield* IndexScores
        const list = yield* keyOf("jobOrderList", { scope: "a" })
        const due = yield* keyOf("sfcDue", { scope: "b" })
        yield* raw((c) => Promise.all([c.zadd(list, 7, "o1"), c.set(due, "corrupt")]))
        expect(yield* scores.jobOrderPriority("a", "o1")).toEqual(Option.some(7))
        expect(yield* scores.jobOrderPriority("a", "o2")).toEqual(Option.none())
        expect(yield* scores.sfcDeadline("a", "j1")).toEqual(Option.none())
        yield* expectFailure(scores.sfcDeadline("b", "j1"), { _tag: "WrongType", key: due, expected: "zset", actual: "string" })
        yield* expectFailure(scores.jobOrderPriority("", "o1"), { _tag: "InvalidInput", field: "scope" })
        yield* expectFailure(scores.jobOrderPriority("a", ""), { _tag: "InvalidInput", field: "id" })
        yield* expectFailure(scores.sfcDeadline("a", "\uD800"), { _tag: "InvalidInput", field: "jobId" })
      })
    )
  )
})

describe("ConsumerHeartbeats", () => {
  it.effect("a consumer without a heartbeat is dead; forget removes the own one", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const heartbeats = yield* ConsumerHeartbeats
        const c1 = yield* heartbeats.of({ kind: "sfc", group: "engine", consumer: "c1" }, 60_000)
        const c2 = yield* heartbeats.of({ kind: "sfc", group: "engine", consumer: "c2" }, 60_000)
        yield* c1.beat
        yield* c2.beat
        expect(yield* c1.dead(["c1", "c2", "c3", ""])).toEqual(["c3"])
        yield* c2.forget
        expect(yield* c1.dead(["c2"])).toEqual(["c2"])
        expect(yield* c1.dead([])).toEqual([])
      })
    )
  )

  it.effect("a bad identity or lifetime is InvalidInput", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const heartbeats = yield* ConsumerHeartbeats
        yield* expectFailure(heartbeats.of({ kind: "sfc", group: "", consumer: "c" }, 1000), { _tag: "InvalidInput", field: "group" })
        yield* expectFailure(heartbeats.of({ kind: "sfc", group: "g", consumer: "c" }, 0), { _tag: "InvalidInput", field: "ttlMs" })
      })
    )
  )
})

describe("Nudges", () => {
  it.effect("calls back with the scope of every nudge on its channel, not on others", () => {
    const prefix = randomPrefix("small")
    return Effect.gen(function* () {
      const nudges = yield* Nudges
      const got = yield* Deferred.make<string>()
      const seen: Array<string> = []
      yield* nudges.listen("sfc", "test-nudges", {
        onNudge: (scope) => {
          seen.push(scope)
          Deferred.doneUnsafe(got, Effect.succeed(scope))
        }
      })
      const sfc = yield* keyOf("nudge", { kind: "sfc" })
      const changes = yield* keyOf("nudge", { kind: "changes" })
      yield* raw((c) => c.publish(changes, "not-this").then(() => c.publish(sfc, "area-1")))
      expect(yield* Deferred.await(got).pipe(Effect.timeout("10 seconds"))).toBe("area-1")
      expect(seen).toEqual(["area-1"])
      yield* expectFailure(Effect.scoped(nudges.listen("", "bad", { onNudge: () => undefined })), { _tag: "InvalidInput", field: "kind" })
    }).pipe(Effect.provide(layerFor(prefix)))
  })
})

describe("JobOrderRetention", () => {
  it.effect("scans a scope's job order documents with their retention, and reads one's", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const retention = yield* JobOrderRetention
        const live = yield* keyOf("jobOrder", { id: "live" })
        const retired = yield* keyOf("jobOrder", { id: "retired:1" })
        const foreign = yield* keyOf("jobOrder", { id: "foreign" })
        yield* raw((c) =>
          Promise.all([
            c.hset(live, "v", "3", "scope", "a", "doc", `{"n":1}`),
            c.hset(retired, "v", "1", "scope", "a", "doc", `{"n":2}`).then(() => c.pexpire(retired, 600_000)),
            c.hset(foreign, "v", "1", "scope", "b", "doc", `{}`)
          ])
        )
        const found = [...(yield* Stream.runCollect(retention.scan("a")))].sort((x, y) => (x.id < y.id ? -1 : 1))
        expect(found).toEqual([
          { id: "live", version: 3, doc: `{"n":1}`, expiresInMs: null },
          { id: "retired:1", version: 1, doc: `{"n":2}`, expiresInMs: expect.any(Number) }
        ])
        expect(found[1]!.expiresInMs).toBeGreaterThan(0)
        expect(yield* retention.expiresIn("live")).toEqual(Option.none())
        expect(yield* retention.expiresIn("missing")).toEqual(Option.none())
        expect(Option.getOrThrow(yield* retention.expiresIn("retired:1"))).toBeGreaterThan(0)
        yield* expectFailure(Stream.runCollect(retention.scan("")), { _tag: "InvalidInput", field: "scope" })
        yield* expectFailure(retention.expiresIn(""), { _tag: "InvalidInput", field: "id" })
      })
    )
  )
})

describe("LeaseOverview", () => {
  it.effect("lists the publisher lease and every start lease with holder and time left; a corrupted one is flagged", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const overview = yield* LeaseOverview
        const publisherKey = yield* keyOf("publisherLease", {})
        expect(yield* overview.list).toEqual([{ lease: "publisher", configId: null, key: publisherKey, holder: null, wrongType: false, remainingMs: null }])
        yield* (yield* PublisherLease).acquire("pub-1", 30_000)
        yield* (yield* StartLease).acquire("cfg:2", "inst-1", 30_000)
        const corrupt = yield* keyOf("startLease", { configId: "cfg-1" })
        yield* raw((c) => c.hset(corrupt, "f", "v"))
        const rows = yield* overview.list
        expect(rows.map((r) => [r.lease, r.configId, r.holder, r.wrongType, r.remainingMs === null])).toEqual([
          ["publisher", null, "pub-1", false, false],
          // By key: the encoded ':' (%3A) sorts before '-'.
          ["start", "cfg:2", "inst-1", false, false],
          ["start", "cfg-1", null, true, true]
        ])
      })
    )
  )
})

describe("PublisherCursors.rewind and StoreHealth", () => {
  it.effect("rewind sets the scope's cursor to the start of the stream; bad input and WrongType", () =>
    onFreshPrefix(() =>
      Effect.gen(function* () {
        const cursors = yield* PublisherCursors
        yield* cursors.set("a", "5-0")
        yield* cursors.rewind("a")
        expect(yield* cursors.get("a")).toEqual(Option.some("0"))
        yield* expectFailure(cursors.rewind(""), { _tag: "InvalidInput", field: "scope" })
        const key = yield* keyOf("publisherCursors", {})
        yield* raw((c) => c.del(key).then(() => c.set(key, "x")))
        yield* expectFailure(cursors.rewind("a"), { _tag: "WrongType", key, expected: "hash", actual: "string" })
        yield* (yield* StoreHealth).ping
      })
    )
  )
})
