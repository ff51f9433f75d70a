import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { ClaimResult, DedupeStore, type DoneMark, IndexMaintenance, InvalidInput, JobOrderDao, JobOrderSearch, KeyReads, type PutJobOrder, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

/**
 * A job order's create that lands its request's done mark in the same atomic step: both or
 * neither, and only while the mark's token still holds the request's claim.
 */

const prefix = randomPrefix("cdone")
const layer = Layer.mergeAll(DedupeStore.Default, JobOrderDao.Default).pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

const create = (id: string, scope: string, extra: Partial<PutJobOrder> = {}): PutJobOrder => ({
  id,
  scope,
  doc: JSON.stringify({ JobOrderID: id }),
  priority: 1,
  expectedVersion: 0,
  change: "Store",
  op: `op-${id}`,
  ...extra
})

/** Claims request `event` with `token` and builds its done mark keeping `reply`. */
const claimed = (event: string, token: string, reply?: string) =>
  Effect.gen(function* () {
    const dedupe = yield* DedupeStore
    yield* dedupe.claim("urn:mes", event, token, 60_000)
    const mark = dedupe.doneMark("urn:mes", event, token, 60_000, reply)
    if (mark instanceof InvalidInput) return yield* Effect.die(mark)
    return mark
  })

/** Every key under the prefix with its content: equal snapshots mean nothing was written. */
const snapshot = Effect.gen(function* () {
  const valkey = yield* Valkey
  const contents = yield* KeyReads.contents(valkey, yield* KeyReads.islandKeys(valkey))
  return Object.fromEntries(contents.map(({ key, type, value }) => [key, JSON.stringify({ type, value })]))
})

const createMarkingDone = (input: PutJobOrder, mark: DoneMark) => Effect.flatMap(JobOrderDao, (dao) => dao.createMarkingDone(input, mark))

describe("JobOrderDao.createMarkingDone", () => {
  it.effect("creates the job order at version 1 and marks the request done with its reply, together", () =>
    Effect.gen(function* () {
      const mark = yield* claimed("ev-1", "tok-1", '{"reply":1}')
      expect(yield* createMarkingDone(create("jo-1", "cd-a"), mark)).toEqual({ version: 1, op: "op-jo-1" })
      const dao = yield* JobOrderDao
      expect(yield* dao.get("jo-1")).toMatchObject({ version: 1, scope: "cd-a", doc: '{"JobOrderID":"jo-1"}' })
      expect((yield* dao.list("cd-a")).items).toEqual([{ id: "jo-1", priority: 1 }])
      expect(yield* dao.outcome("jo-1", "op-jo-1")).toMatchObject({ _tag: "Some", value: 1 })
      // A duplicate of the request is done, answered with the reply kept.
      const dedupe = yield* DedupeStore
      expect(yield* dedupe.claim("urn:mes", "ev-1", "tok-2", 60_000)).toEqual(ClaimResult.Done({ key: mark.key, reply: '{"reply":1}' }))
    }).pipe(Effect.provide(layer))
  )

  it.effect("writes nothing, not even the job order, once the claim is another token's or gone: LeaseLost", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const mark = yield* claimed("ev-2", "tok-1")
      // Another holder took the claim over.
      yield* unsafeCommand(valkey, "take over", (c) => c.set(mark.key, "processing:tok-other", "PX", 60_000))
      const before = yield* snapshot
      const taken = yield* Effect.flip(createMarkingDone(create("jo-2", "cd-b"), mark))
      expect(taken).toMatchObject({ _tag: "LeaseLost", message: expect.stringContaining("another token holds it") })
      yield* unsafeCommand(valkey, "expire", (c) => c.del(mark.key))
      const gone = yield* Effect.flip(createMarkingDone(create("jo-2", "cd-b"), mark))
      expect(gone).toMatchObject({ _tag: "LeaseLost", message: expect.stringContaining("the lease expired") })
      const after = yield* snapshot
      delete before[mark.key]
      expect(after).toEqual(before)
    }).pipe(Effect.provide(layer))
  )

  it.effect("a refused create (the id taken, the scope full) writes nothing and leaves the claim held, for the refusal's own mark", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      yield* createMarkingDone(create("jo-3", "cd-c"), yield* claimed("ev-3", "tok-3"))
      const mark = yield* claimed("ev-4", "tok-4", '{"reply":4}')
      const before = yield* snapshot
      expect(yield* Effect.flip(createMarkingDone(create("jo-3", "cd-c"), mark))).toMatchObject({ _tag: "VersionConflict", expected: 0, actual: 1 })
      expect(yield* Effect.flip(createMarkingDone(create("jo-3", "cd-other"), mark))).toMatchObject({ _tag: "VersionConflict" })
      expect(yield* Effect.flip(createMarkingDone(create("jo-4", "cd-c", { limit: 1 }), mark))).toMatchObject({ _tag: "LimitReached", limit: 1, count: 1 })
      expect(yield* snapshot).toEqual(before)
      expect(yield* dedupe.claim("urn:mes", "ev-4", "tok-4", 60_000)).toMatchObject({ _tag: "Claimed", alreadyHeld: true })
      yield* dedupe.markDone("urn:mes", "ev-4", "tok-4", 60_000, '{"refused":4}')
      expect(yield* dedupe.claim("urn:mes", "ev-4", "tok-5", 60_000)).toMatchObject({ _tag: "Done", reply: '{"refused":4}' })
    }).pipe(Effect.provide(layer))
  )

  it.effect("the create enters the job order in the search index in the same step; a refused one enters nothing", () =>
    Effect.gen(function* () {
      const doc = JSON.stringify({
        JobOrder: { JobOrderID: "jo-s1", Priority: 4, WorkMasterID: [{ ID: "wm-search" }] },
        State: [{ StateText: { Text: "AllowedToStart", Locale: "en" }, StateNumber: 2 }, { StateText: { Text: "Ready", Locale: "en" }, StateNumber: 2 }]
      })
      const mark = yield* claimed("ev-s1", "tok-s1")
      yield* createMarkingDone(create("jo-s1", "cd-search", { doc, priority: 4 }), mark)
      const search = yield* JobOrderSearch
      const page = yield* search.search({ scopes: ["cd-search"], states: ["AllowedToStart_Ready"], workMaster: "wm-search" })
      expect(page).toMatchObject({ total: 1, totalExact: true, items: [{ id: "jo-s1", state: "AllowedToStart_Ready", workMaster: "wm-search", priority: 4, endedMs: null }] })
      expect(page.items[0]!.createdMs).toBeGreaterThan(0)
      expect((yield* search.search({ scopes: ["cd-search"], idPrefix: "jo-s" })).items.map((i) => i.id)).toEqual(["jo-s1"])
      const check = yield* Effect.flatMap(IndexMaintenance, (m) => m.check({ scope: "cd-search" }))
      expect(check.filter((i) => i.key.includes("joborder:search"))).toEqual([])
      // A second create of the id is refused: the index keeps the first alone.
      const again = yield* claimed("ev-s2", "tok-s2")
      expect((yield* Effect.flip(createMarkingDone(create("jo-s1", "cd-search", { doc: doc.replace("wm-search", "wm-other") }), again)))._tag).toBe("VersionConflict")
      expect((yield* search.search({ scopes: ["cd-search"], workMaster: "wm-other" })).items).toEqual([])
    }).pipe(Effect.provide(Layer.mergeAll(JobOrderSearch.Default, IndexMaintenance.Default).pipe(Layer.provideMerge(layer))))
  )

  it.effect("bad input is refused before anything is sent, every field named as markDone and put name it", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const valkey = yield* Valkey
      const tooLong = "x".repeat(valkey.maxDocumentBytes + 1)
      expect(dedupe.doneMark("urn:mes", "ev-5", "tok", 60_000, tooLong)).toMatchObject({ _tag: "InvalidInput", field: "reply" })
      expect(dedupe.doneMark("urn:mes", "ev-5", "tok", 0)).toMatchObject({ _tag: "InvalidInput", field: "ttlMs" })
      expect(dedupe.doneMark("urn:mes", "ev-5", "", 60_000)).toMatchObject({ _tag: "InvalidInput", field: "token" })
      expect(dedupe.doneMark("urn:mes", "", "tok", 60_000)).toMatchObject({ _tag: "InvalidInput", field: "id" })
      const mark = yield* claimed("ev-6", "tok-6")
      const before = yield* snapshot
      expect(yield* Effect.flip(createMarkingDone(create("jo-6", "cd-d", { priority: Number.NaN }), mark))).toMatchObject({ _tag: "InvalidInput", field: "priority" })
      expect(yield* Effect.flip(createMarkingDone(create("jo-6", "cd-d", { doc: tooLong }), mark))).toMatchObject({ _tag: "InvalidInput", field: "doc" })
      expect(yield* Effect.flip(createMarkingDone(create("", "cd-d"), mark))).toMatchObject({ _tag: "InvalidInput" })
      expect(yield* snapshot).toEqual(before)
    }).pipe(Effect.provide(layer))
  )

  it.effect("a dedupe key of another type is WrongType, and nothing is written", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const mark = yield* claimed("ev-7", "tok-7")
      yield* unsafeCommand(valkey, "corrupt", (c) => c.del(mark.key).then(() => c.sadd(mark.key, "x")))
      const before = yield* snapshot
      expect(yield* Effect.flip(createMarkingDone(create("jo-7", "cd-e"), mark))).toMatchObject({ _tag: "WrongType", key: mark.key, expected: "string", actual: "set" })
      expect(yield* snapshot).toEqual(before)
    }).pipe(Effect.provide(layer))
  )
})
