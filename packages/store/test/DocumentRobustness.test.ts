import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import type { KeyFamily, KeyParts } from "@microdcs/keyschema"
import { randomPrefix } from "@microdcs/test-utils"
import {
  type ConnectionError,
  type InvalidInput,
  JobOrderDao,
  JobResponseDao,
  type LimitReached,
  type NotFound,
  type ScopeConflict,
  type StateMoved,
  type StoredDocument,
  Valkey,
  ValkeyLayer,
  type VersionConflict,
  WorkMasterDao,
  type Written,
  type WrongType
} from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { dedicated } from "../src/RawDoor.js"

/**
 * The properties every document type shares, run against job orders,
 * job responses and work masters through one adapter per type.
 */

const prefix = randomPrefix()
const layer = Layer.mergeAll(JobOrderDao.Default, JobResponseDao.Default, WorkMasterDao.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
)
type Services = JobOrderDao | JobResponseDao | WorkMasterDao | Valkey

type Failure = VersionConflict | ScopeConflict | LimitReached | StateMoved | WrongType | InvalidInput | NotFound | ConnectionError
type Op<A> = Effect.Effect<A, Failure, Services>

interface PutArgs {
  readonly id: string
  readonly scope: string
  readonly doc: string
  readonly expectedVersion: number
  readonly change?: string
}

interface Kind {
  readonly name: "joborder" | "jobresponse" | "workmaster"
  readonly docFamily: Extract<KeyFamily, "jobOrder" | "jobResponse" | "workMaster">
  readonly put: (args: PutArgs) => Op<Written>
  readonly get: (id: string) => Op<StoredDocument>
  readonly delete: (id: string) => Op<Written>
  /** Runs every lookup the DAO has for a document that was put with `args`, expecting to find it. */
  readonly findEverywhere: (args: PutArgs) => Op<void>
  /** The index keys a put of `args` writes, with the type each must hold. */
  readonly indexKeys: (args: PutArgs) => Op<ReadonlyArray<{ readonly key: string; readonly type: string }>>
  /** Extra inputs of this type that must be refused. */
  readonly badPuts: ReadonlyArray<{ readonly field: string; readonly put: Op<Written> }>
}

const key = <F extends KeyFamily>(family: F, parts: KeyParts<F>) => Effect.flatMap(Valkey, (v) => v.key(family, parts))

const orderOf = (id: string) => `order ${id}`
const stateOf = (id: string) => `Running_${id}`

const jobOrder: Kind = {
  name: "joborder",
  docFamily: "jobOrder",
  put: (a) => Effect.flatMap(JobOrderDao, (dao) => dao.put({ ...a, priority: 1 })),
  get: (id) => Effect.flatMap(JobOrderDao, (dao) => dao.get(id)),
  delete: (id) => Effect.flatMap(JobOrderDao, (dao) => dao.delete({ id })),
  findEverywhere: (a) =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      expect((yield* dao.get(a.id)).doc).toBe(a.doc)
      expect((yield* dao.list(a.scope)).items.map((i) => i.id)).toContain(a.id)
    }),
  indexKeys: (a) => Effect.all([key("jobOrderList", { scope: a.scope }).pipe(Effect.map((k) => ({ key: k, type: "zset" })))]),
  badPuts: [
    { field: "priority", put: Effect.flatMap(JobOrderDao, (dao) => dao.put({ id: "p", scope: "s", doc: "{}", priority: NaN, expectedVersion: 0 })) }
  ]
}

const jobResponse: Kind = {
  name: "jobresponse",
  docFamily: "jobResponse",
  put: (a) => Effect.flatMap(JobResponseDao, (dao) => dao.put({ ...a, orderId: orderOf(a.id), state: stateOf(a.id), startTime: 5 })),
  get: (id) => Effect.flatMap(JobResponseDao, (dao) => dao.get(id)),
  delete: (id) => Effect.flatMap(JobResponseDao, (dao) => dao.delete({ id })),
  findEverywhere: (a) =>
    Effect.gen(function* () {
      const dao = yield* JobResponseDao
      expect((yield* dao.get(a.id)).doc).toBe(a.doc)
      expect(yield* dao.byOrder(orderOf(a.id))).toMatchObject({ id: a.id, scope: a.scope, state: stateOf(a.id), doc: a.doc })
      expect((yield* dao.byState(a.scope, stateOf(a.id))).ids).toEqual([a.id])
      expect((yield* dao.list(a.scope)).items).toContainEqual({ id: a.id, startTime: 5 })
      expect((yield* dao.getMany([a.id])).map((d) => d.id)).toEqual([a.id])
    }),
  indexKeys: (a) =>
    Effect.all([
      key("jobResponseList", { scope: a.scope }).pipe(Effect.map((k) => ({ key: k, type: "zset" }))),
      key("jobResponseByState", { scope: a.scope, state: stateOf(a.id) }).pipe(Effect.map((k) => ({ key: k, type: "set" }))),
      key("jobResponseByOrder", { orderId: orderOf(a.id) }).pipe(Effect.map((k) => ({ key: k, type: "string" })))
    ]),
  badPuts: [
    ["orderId", { orderId: "" }],
    ["state", { state: "bad\uD800" }],
    ["state", { state: "s".repeat(513) }],
    ["startTime", { startTime: Infinity }]
  ].map(([field, patch]) => ({
    field: field as string,
    put: Effect.flatMap(JobResponseDao, (dao) =>
      dao.put({ id: "p", scope: "s", orderId: "o", state: "A", doc: "{}", expectedVersion: 0, ...(patch as object) })
    )
  }))
}

const workMaster: Kind = {
  name: "workmaster",
  docFamily: "workMaster",
  put: (a) => Effect.flatMap(WorkMasterDao, (dao) => dao.put(a)),
  get: (id) => Effect.flatMap(WorkMasterDao, (dao) => dao.get(id)),
  delete: (id) => Effect.flatMap(WorkMasterDao, (dao) => dao.delete({ id })),
  findEverywhere: (a) =>
    Effect.gen(function* () {
      const dao = yield* WorkMasterDao
      expect((yield* dao.get(a.id)).doc).toBe(a.doc)
      expect(yield* dao.list(a.scope)).toContain(a.id)
      expect(yield* dao.isMember(a.scope, a.id)).toBe(true)
    }),
  indexKeys: (a) => Effect.all([key("workMasterList", { scope: a.scope }).pipe(Effect.map((k) => ({ key: k, type: "set" })))]),
  badPuts: []
}

/** Every key of this test file's prefix with a digest of its content: equal snapshots = nothing written. */
const snapshot = Effect.gen(function* () {
  const valkey = yield* Valkey
  return yield* unsafeCommand(valkey, "snapshot", async (c) => {
    const keys = (await c.keys(`${prefix}:*`)).sort()
    const out: Record<string, unknown> = {}
    for (const k of keys) {
      const type = await c.type(k)
      out[k] =
        type === "hash" ? await c.hgetall(k)
        : type === "string" ? await c.get(k)
        : type === "set" ? (await c.smembers(k)).sort()
        : type === "zset" ? await c.zrange(k, 0, -1, "WITHSCORES")
        : type === "stream" ? [await c.xlen(k), (await c.xrevrange(k, "+", "-", "COUNT", 1))[0]?.[0]]
        : type
    }
    return out
  })
})

const changesOf = (scope: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const k = yield* valkey.key("changes", { scope })
    const entries = yield* unsafeCommand(valkey, "xrange", (c) => c.xrange(k, "-", "+"))
    return entries.map(([, fields]) => {
      const record: Record<string, string> = {}
      for (let i = 0; i < fields.length; i += 2) record[fields[i]!] = fields[i + 1]!
      return record
    })
  })

const doc = (value: unknown) => JSON.stringify(value)
const FIBERS = 8
const ROUNDS = 500

/**
 * 8 fibers x 500 rounds of read, modify, put with the read version, re-reading on VersionConflict.
 * Each fiber owns one counter; only it increments it, so before its round r the counter must read
 * exactly r. A lost update shows at the next round, a doubled one at the end.
 */
const contend = (kind: Kind) =>
  Effect.gen(function* () {
    const id = `contended-${kind.name}`
    const scope = "contended"
    yield* kind.put({ id, scope, doc: doc({ counts: Array.from({ length: FIBERS }, () => 0) }), expectedVersion: 0 })
    let conflicts = 0
    let successes = 1
    const round = (fiber: number, r: number) =>
      Effect.gen(function* () {
        const current = yield* kind.get(id)
        const counts = (JSON.parse(current.doc) as { counts: Array<number> }).counts
        if (counts[fiber] !== r) return yield* Effect.die(new Error(`fiber ${fiber} round ${r} reads ${counts[fiber]}`))
        counts[fiber] = r + 1
        return yield* kind.put({ id, scope, doc: doc({ counts }), expectedVersion: current.version })
      }).pipe(
        Effect.tapErrorTag("VersionConflict", () => Effect.sync(() => conflicts++)),
        Effect.retry({ while: (e) => e._tag === "VersionConflict" }),
        Effect.tap(() => Effect.sync(() => successes++))
      )
    const fibers = Array.from({ length: FIBERS }, (_, f) =>
      Effect.forEach(Array.from({ length: ROUNDS }, (_, r) => r), (r) => round(f, r), { discard: true })
    )
    yield* Effect.all(fibers, { concurrency: "unbounded", discard: true })
    const final = yield* kind.get(id)
    expect(successes).toBe(1 + FIBERS * ROUNDS)
    expect(final.version).toBe(successes)
    expect(JSON.parse(final.doc)).toEqual({ counts: Array.from({ length: FIBERS }, () => ROUNDS) })
    expect(conflicts).toBeGreaterThan(0)
  })

for (const kind of [jobOrder, jobResponse, workMaster]) {
  describe(`${kind.name} documents`, () => {
    // A correctness test, not a timed one: on a loaded 2-core machine 4,000 contended puts take a while.
    it.effect("8 fibers x 500 rounds on one document lose no update", () => contend(kind).pipe(Effect.provide(layer)), 120_000)

    it.effect("a corrupted key fails the put with WrongType and writes nothing", () =>
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const existing = { id: `wt-${kind.name}`, scope: "wt", doc: doc({ n: 1 }), expectedVersion: 0 }
        yield* kind.put(existing)
        const fresh = { id: `wt-new-${kind.name}`, scope: "wt", doc: doc({ n: 1 }), expectedVersion: 0 }
        const update = { ...existing, doc: doc({ n: 2 }), expectedVersion: 1 }
        for (const attempt of [fresh, update]) {
          const targets = [
            ...(yield* kind.indexKeys(attempt)),
            { key: yield* key("changes", { scope: attempt.scope }), type: "stream" },
            { key: yield* key(kind.docFamily, { id: attempt.id }), type: "hash" }
          ]
          for (const target of targets) {
            const saved = yield* unsafeCommand(valkey, "dump", (c) => c.dumpBuffer(target.key))
            // Corrupt it with a type it must not hold: a string, or a set where a string belongs.
            const actual = target.type === "string" ? "set" : "string"
            yield* unsafeCommand(valkey, "corrupt", async (c) => {
              await c.del(target.key)
              await (actual === "set" ? c.sadd(target.key, "corrupt") : c.set(target.key, "corrupt"))
            })
            const before = yield* snapshot
            const error = yield* Effect.flip(kind.put(attempt))
            expect(error).toMatchObject({ _tag: "WrongType", key: target.key, actual, expected: target.type })
            expect(yield* snapshot).toEqual(before)
            yield* unsafeCommand(valkey, "restore", (c) =>
              c.del(target.key).then(() => (saved ? c.restore(target.key, 0, saved) : undefined))
            )
          }
        }
        expect((yield* kind.get(existing.id)).version).toBe(1)
        expect((yield* Effect.flip(kind.get(fresh.id)))._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer))
    )

    it.effect("survives SCRIPT FLUSH between calls", () =>
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const flush = unsafeCommand(valkey, "script flush", (c) => c.script("FLUSH"))
        const args = { id: `flush-${kind.name}`, scope: "flush", doc: doc({ n: 1 }), expectedVersion: 0 }
        yield* kind.put(args)
        yield* flush
        expect((yield* kind.put({ ...args, expectedVersion: 1 })).version).toBe(2)
        yield* flush
        yield* kind.findEverywhere(args)
        yield* flush
        expect((yield* kind.delete(args.id)).version).toBe(2)
      }).pipe(Effect.provide(layer))
    )

    it.effect("finds ids and scopes with ':', '|', '%', spaces and non-ASCII in every lookup", () =>
      Effect.gen(function* () {
        const ids = ["a:b", "x|y", "100%", "%3A", "with space", "tab\there", "ünïcødé 日本 🚀", "list:x", "jobresponse:byorder:x"]
        for (const [i, id] of ids.entries()) {
          const args = { id, scope: `scope:${i} | 50% ü`, doc: doc({ id }), expectedVersion: 0 }
          yield* kind.put(args)
          yield* kind.findEverywhere(args)
        }
        // Distinct ids never share a key: every one is still its own document.
        for (const id of ids) expect(JSON.parse((yield* kind.get(id)).doc)).toEqual({ id })
      }).pipe(Effect.provide(layer))
    )

    it.effect("refuses bad input with InvalidInput and writes nothing", () =>
      Effect.gen(function* () {
        const existing = { id: `in-${kind.name}`, scope: "input", doc: doc({ n: 1 }), expectedVersion: 0 }
        yield* kind.put(existing)
        const before = yield* snapshot
        const cases: ReadonlyArray<{ readonly field: string; readonly put: Op<Written> }> = [
          { field: "id", put: kind.put({ ...existing, id: "" }) },
          { field: "id", put: kind.put({ ...existing, id: "i".repeat(513) }) },
          { field: "id", put: kind.put({ ...existing, id: "lone\uD800" }) },
          { field: "scope", put: kind.put({ ...existing, id: "new", scope: "" }) },
          { field: "scope", put: kind.put({ ...existing, id: "new", scope: "\uDC00" }) },
          { field: "scope", put: kind.put({ ...existing, id: "new", scope: "é".repeat(257) }) },
          { field: "doc", put: kind.put({ ...existing, expectedVersion: 1, doc: "{not json" }) },
          { field: "doc", put: kind.put({ ...existing, expectedVersion: 1, doc: "" }) },
          { field: "doc", put: kind.put({ ...existing, expectedVersion: 1, doc: doc({ s: "x" }).replace("x", "\uD800") }) },
          { field: "doc", put: kind.put({ ...existing, expectedVersion: 1, doc: doc("x".repeat(1024 * 1024)) }) },
          { field: "expectedVersion", put: kind.put({ ...existing, expectedVersion: -2 }) },
          { field: "expectedVersion", put: kind.put({ ...existing, expectedVersion: 1.5 }) },
          { field: "id", put: kind.delete("") },
          { field: "id", put: kind.delete("\uD800") },
          ...kind.badPuts
        ]
        for (const { field, put } of cases) {
          expect(yield* Effect.flip(put), field).toMatchObject({ _tag: "InvalidInput", field })
        }
        expect((yield* Effect.flip(kind.get("")))._tag).toBe("InvalidInput")
        expect(yield* snapshot).toEqual(before)
      }).pipe(Effect.provide(layer))
    )

    it.effect("writes one change entry per write with kind, id, change, v, op and ts", () =>
      Effect.gen(function* () {
        const scope = `changes-${kind.name}`
        const id = "c:1"
        const t0 = Date.now()
        const created = yield* kind.put({ id, scope, doc: doc({}), expectedVersion: 0, change: "Store" })
        const updated = yield* kind.put({ id, scope, doc: doc({ a: 1 }), expectedVersion: 1 })
        yield* Effect.flip(kind.put({ id, scope, doc: doc({}), expectedVersion: 1 }))
        const deleted = yield* kind.delete(id)
        const entries = yield* changesOf(scope)
        expect(entries).toEqual([
          { kind: kind.name, id, change: "Store", v: "1", op: created.op, ts: expect.stringMatching(/^\d+$/) },
          { kind: kind.name, id, change: "put", v: "2", op: updated.op, ts: expect.stringMatching(/^\d+$/) },
          { kind: kind.name, id, change: "delete", v: "2", op: deleted.op, ts: expect.stringMatching(/^\d+$/) }
        ])
        for (const entry of entries) expect(Math.abs(Number(entry["ts"]) - t0)).toBeLessThan(10_000)
        const valkey = yield* Valkey
        const scopesKey = yield* key("scopes", {})
        const scopes = yield* unsafeCommand(valkey, "smembers", (c) => c.smembers(scopesKey))
        expect(scopes).toContain(scope)
      }).pipe(Effect.provide(layer))
    )

    it.live("nudges nudge:changes with the scope on every write", () =>
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const channel = yield* key("nudge", { kind: "changes" })
        const subscriber = yield* dedicated(valkey, "nudge test")
        const messages: Array<string> = []
        subscriber.on("message", (ch: string, message: string) => {
          if (ch === channel) messages.push(message)
        })
        yield* Effect.promise(() => subscriber.subscribe(channel))
        const scope = `nudged ${kind.name}`
        yield* kind.put({ id: "n1", scope, doc: doc({}), expectedVersion: 0 })
        yield* kind.delete("n1")
        // A PING on the subscriber comes back after every message published before it was sent.
        yield* Effect.promise(() => subscriber.ping())
        expect(messages.filter((m) => m === scope)).toHaveLength(2)
      }).pipe(Effect.scoped, Effect.provide(layer))
    )

    it.effect("trims the change stream near 5000 entries", () =>
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const scope = `trimmed-${kind.name}`
        yield* Effect.forEach(
          Array.from({ length: 6000 }, (_, i) => i),
          (i) => kind.put({ id: `t${i % 50}`, scope, doc: "{}", expectedVersion: -1 }),
          { concurrency: 64, discard: true }
        )
        const changesKey = yield* key("changes", { scope })
        const length = yield* unsafeCommand(valkey, "xlen", (c) => c.xlen(changesKey))
        expect(length).toBeGreaterThanOrEqual(5000)
        expect(length).toBeLessThanOrEqual(5100)
      }).pipe(Effect.provide(layer))
    )
  })
}
