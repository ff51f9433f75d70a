import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import {
  IndexMaintenance,
  JobOrderDao,
  type JobOrderSearchFilter,
  type JobOrderSearchItem,
  JobOrderSearch,
  Valkey,
  ValkeyLayer
} from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

// One island for the file: every test writes scopes of its own, named after it.
const services = Layer.mergeAll(JobOrderSearch.Default, JobOrderDao.Default, IndexMaintenance.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("search") }))
)

const stateEntries: Record<string, ReadonlyArray<readonly [string, number]>> = {
  AllowedToStart_Ready: [["AllowedToStart", 2], ["Ready", 2]],
  Running: [["Running", 3]],
  Ended_Completed: [["Ended", 5], ["Completed", 1]],
  Aborted: [["Aborted", 6]],
  EndState: [["EndState", 7]]
}

/** A job order record as job-control writes it. */
const record = (id: string, state: string, o: { priority?: number; workMaster?: string; comment?: string } = {}) =>
  JSON.stringify({
    JobOrder: { JobOrderID: id, Priority: o.priority ?? 0, ...(o.workMaster ? { WorkMasterID: [{ ID: o.workMaster }] } : {}) },
    State: stateEntries[state]!.map(([Text, StateNumber]) => ({ StateText: { Text, Locale: "en" }, StateNumber })),
    ...(o.comment ? { Comment: o.comment } : {})
  })

const putOne = (scope: string, id: string, state: string, o: { priority?: number; workMaster?: string; comment?: string; retainMs?: number } = {}) =>
  Effect.flatMap(JobOrderDao, (dao) =>
    dao.put({ id, scope, doc: record(id, state, o), priority: o.priority ?? 0, expectedVersion: -1, ...(o.retainMs ? { retainMs: o.retainMs } : {}) })
  )

const put = putOne

const search = (filter: JobOrderSearchFilter, options: { after?: string; limit?: number } = {}) =>
  Effect.flatMap(JobOrderSearch, (s) => s.search(filter, options))

/** The ids, without the seed's scope suffix. */
const ids = (items: ReadonlyArray<JobOrderSearchItem>) => items.map((i) => i.id.replace(/\.[a-z-]+$/, ""))

/** Every page of a search, following the cursor. */
const allPages = (filter: JobOrderSearchFilter, limit: number) =>
  Effect.gen(function* () {
    const found: Array<JobOrderSearchItem> = []
    let after: string | undefined
    let pages = 0
    do {
      const page = yield* search(filter, { limit, ...(after ? { after } : {}) })
      found.push(...page.items)
      after = page.next ?? undefined
      pages++
    } while (after !== undefined && pages < 100)
    return { found, pages }
  })

/** Job order ids are island-wide: each scope's seed gets its own (`jo-axle-001.{scope}`). */
const seed = (scope: string) =>
  Effect.gen(function* () {
    const put = (s: string, id: string, state: string, o?: Parameters<typeof putOne>[3]) => putOne(s, `${id}.${scope}`, state, o)
    yield* put(scope, "jo-axle-001", "Running", { priority: 5, workMaster: "wm-axle" })
    yield* put(scope, "jo-axle-002", "AllowedToStart_Ready", { priority: 1, workMaster: "wm-axle" })
    yield* put(scope, "jo-axle-003", "Aborted", { priority: 3, workMaster: "wm-axle", comment: "Step Drill failed: Spindle OVERLOAD" })
    yield* put(scope, "jo-gear-001", "Ended_Completed", { priority: 7, workMaster: "wm-gear" })
    yield* put(scope, "jo-gear-002", "Aborted", { priority: 2, comment: "operator stopped it" })
    yield* put(scope, "jo-gear-003", "Running", { priority: -4 })
  })

layer(services, { timeout: 60_000 })("JobOrderSearch", (it) => {
  it.effect("finds by every dimension, with exact totals", () =>
    Effect.gen(function* () {
      yield* seed("dims")
      const scopes = ["dims"]
      const byPrefix = yield* search({ scopes, idPrefix: "jo-axle" })
      expect(ids(byPrefix.items)).toEqual(["jo-axle-001", "jo-axle-002", "jo-axle-003"])
      expect(byPrefix).toMatchObject({ total: 3, totalExact: true, next: null })
      const running = yield* search({ scopes, states: ["Running"] })
      expect(ids(running.items).sort()).toEqual(["jo-axle-001", "jo-gear-003"])
      expect(running.total).toBe(2)
      const twoStates = yield* search({ scopes, states: ["Running", "Aborted"] })
      expect(twoStates.total).toBe(4)
      const wm = yield* search({ scopes, workMaster: "wm-axle" })
      expect(ids(wm.items).sort()).toEqual(["jo-axle-001", "jo-axle-002", "jo-axle-003"])
      expect(wm.items[0]).toMatchObject({ scope: "dims", workMaster: "wm-axle" })
      const ended = yield* search({ scopes, endedFrom: 0 })
      expect(ids(ended.items).sort()).toEqual(["jo-axle-003", "jo-gear-001", "jo-gear-002"])
      expect(ended.items.every((i) => typeof i.endedMs === "number")).toBe(true)
      const priority = yield* search({ scopes, priorityMin: 2, priorityMax: 5 })
      expect(ids(priority.items)).toEqual(["jo-axle-001", "jo-axle-003", "jo-gear-002"])
      const negative = yield* search({ scopes, priorityMax: 0 })
      expect(ids(negative.items)).toEqual(["jo-gear-003"])
      const error = yield* search({ scopes, errorText: "overload" })
      expect(error.items).toEqual([expect.objectContaining({ id: "jo-axle-003.dims", state: "Aborted", error: "Step Drill failed: Spindle OVERLOAD" })])
      expect(error.total).toBe(1)
      // Created times: the server's clock, newest first by default.
      const all = yield* search({ scopes })
      expect(all.total).toBe(6)
      const created = all.items.map((i) => i.createdMs!)
      expect([...created].sort((a, b) => b - a)).toEqual(created)
      const window = yield* search({ scopes, createdFrom: created[2]!, createdTo: created[1]! })
      expect(window.items.length).toBeGreaterThanOrEqual(2)
      expect(window.items.every((i) => i.createdMs! >= created[2]! && i.createdMs! <= created[1]!)).toBe(true)
    })
  )

  it.effect("combines filters: the narrowest dimension drives, the rest are checked per job order", () =>
    Effect.gen(function* () {
      yield* seed("combo")
      const scopes = ["combo"]
      const found = yield* search({ scopes, idPrefix: "jo-axle", states: ["Running", "Aborted"] })
      expect(ids(found.items).sort()).toEqual(["jo-axle-001", "jo-axle-003"])
      // Few enough to check one by one: the total is exact.
      expect(found).toMatchObject({ total: 2, totalExact: true })
      const none = yield* search({ scopes, workMaster: "wm-gear", priorityMax: 0 })
      expect(none).toMatchObject({ items: [], total: 0 })
      const errorAndState = yield* search({ scopes, errorText: "stopped", states: ["Running"] })
      expect(errorAndState.total).toBe(0)
      const count = yield* Effect.flatMap(JobOrderSearch, (s) => s.count({ scopes, states: ["Aborted"], idPrefix: "jo-gear" }))
      expect(count).toEqual({ total: 1, totalExact: true })
    })
  )

  it.effect("a page's total is an upper bound past 500 to check one by one; count() checks them all", () =>
    Effect.gen(function* () {
      const dao = yield* JobOrderDao
      const inputs = Array.from({ length: 1200 }, (_, i) => {
        const id = `bound-${i}`
        return { id, scope: "bound", doc: record(id, "Aborted", { comment: i % 2 === 0 ? "boom in step 3" : "operator abort" }), priority: 0, expectedVersion: 0 }
      })
      yield* dao.putMany(inputs)
      const page = yield* search({ scopes: ["bound"], errorText: "BOOM" }, { limit: 10 })
      expect(page).toMatchObject({ total: 1200, totalExact: false })
      expect(page.items.every((i) => i.error === "boom in step 3")).toBe(true)
      const count = yield* Effect.flatMap(JobOrderSearch, (s) => s.count({ scopes: ["bound"], errorText: "BOOM" }))
      expect(count).toEqual({ total: 600, totalExact: true })
      const { found } = yield* allPages({ scopes: ["bound"], errorText: "boom" }, 250)
      expect(found.length).toBe(600)
    })
  )

  it.effect("pages with a cursor across scopes, every job order once", () =>
    Effect.gen(function* () {
      for (const scope of ["page-a", "page-b", "page-c"]) {
        for (let i = 0; i < 7; i++) yield* put(scope, `${scope}-jo-${i}`, i % 2 === 0 ? "Running" : "Aborted", { priority: i })
      }
      const scopes = ["page-c", "page-a", "page-b"]
      const { found, pages } = yield* allPages({ scopes }, 4)
      expect(found.length).toBe(21)
      expect(new Set(found.map((i) => `${i.scope}/${i.id}`)).size).toBe(21)
      expect(pages).toBeGreaterThanOrEqual(6)
      // Scope by scope in name order.
      expect(found.map((i) => i.scope)).toEqual([...found.map((i) => i.scope)].sort())
      const running = yield* allPages({ scopes, states: ["Running"] }, 3)
      expect(running.found.length).toBe(12)
      const first = yield* search({ scopes, states: ["Running"] }, { limit: 3 })
      expect(first).toMatchObject({ total: 12, totalExact: true })
      const prefixed = yield* allPages({ scopes, idPrefix: "page-b-jo-" }, 2)
      expect(ids(prefixed.found)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `page-b-jo-${i}`))
    })
  )

  it.effect("keeps the index right through updates, state moves, retirement and delete", () =>
    Effect.gen(function* () {
      const scopes = ["life"]
      yield* put("life", "jo-1", "AllowedToStart_Ready", { workMaster: "wm-a" })
      const before = (yield* search({ scopes })).items[0]!
      yield* put("life", "jo-1", "Running", { workMaster: "wm-b", priority: 9 })
      expect((yield* search({ scopes, states: ["AllowedToStart_Ready"] })).total).toBe(0)
      expect((yield* search({ scopes, workMaster: "wm-a" })).total).toBe(0)
      const moved = (yield* search({ scopes, states: ["Running"] })).items
      // The creation time stays; the other facts follow the document.
      expect(moved).toEqual([{ ...before, state: "Running", workMaster: "wm-b", priority: 9 }])
      yield* put("life", "jo-1", "Aborted", { workMaster: "wm-b", priority: 9, comment: "bad part" })
      // A long reason is kept to 500 bytes, never cut inside a character.
      yield* put("life", "jo-long", "Aborted", { comment: `a${"é".repeat(260)} tail` })
      const long = (yield* search({ scopes, idPrefix: "jo-long" })).items[0]!
      expect(long.error).toBe(`a${"é".repeat(249)}`)
      const aborted = (yield* search({ scopes, errorText: "BAD" })).items
      expect(aborted).toMatchObject([{ id: "jo-1", state: "Aborted", error: "bad part" }])
      expect(aborted[0]!.endedMs).toBeGreaterThanOrEqual(before.createdMs!)
      // Clear with retention: the job order leaves the list, and the search with it (its expiry then leaves nothing behind).
      yield* put("life", "jo-1", "EndState", { workMaster: "wm-b", retainMs: 60_000 })
      yield* Effect.flatMap(JobOrderDao, (dao) => dao.delete({ id: "jo-long" }))
      expect((yield* search({ scopes })).total).toBe(0)
      const valkey = yield* Valkey
      const searchKey = yield* valkey.key("jobOrderSearch", { scope: "life" })
      expect(yield* unsafeCommand(valkey, "test", (c) => c.zcard(searchKey))).toBe(0)
      // A retired job order that then expires leaves nothing for the index check to find.
      yield* put("life", "jo-3", "EndState", { retainMs: 20 })
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 120)))
      const maintenance = yield* IndexMaintenance
      expect((yield* maintenance.check({ scope: "life" })).filter((i) => i.key === searchKey)).toEqual([])
      yield* put("life", "jo-2", "Running")
      yield* Effect.flatMap(JobOrderDao, (dao) => dao.delete({ id: "jo-2" }))
      expect(yield* unsafeCommand(valkey, "test", (c) => c.zcard(searchKey))).toBe(0)
    })
  )

  it.effect("refuses bad input listing every problem, and a cursor of another search", () =>
    Effect.gen(function* () {
      const bad = yield* Effect.flip(
        search(
          { scopes: [""], states: ["Runing"], createdFrom: -1, endedFrom: 5, endedTo: 4, priorityMin: Number.NaN, idPrefix: "" },
          { limit: 0, after: "not a cursor!" }
        )
      )
      expect(bad._tag).toBe("InvalidInput")
      for (const word of ["scope", "Runing", "createdFrom", "endedFrom (5) is after endedTo (4)", "priorityMin", "idPrefix is empty", "limit", "after is not a cursor"]) {
        expect(bad.message).toContain(word)
      }
      yield* seed("cursor")
      const page = yield* search({ scopes: ["cursor"] }, { limit: 2 })
      const other = yield* Effect.flip(search({ scopes: ["cursor"], states: ["Running"] }, { after: page.next! }))
      expect(other.message).toContain("another search")
    })
  )

  it.effect("the index check finds missing and stray search entries, and the rebuild repairs them", () =>
    Effect.gen(function* () {
      yield* seed("repair")
      const valkey = yield* Valkey
      const maintenance = yield* IndexMaintenance
      const searchKey = yield* valkey.key("jobOrderSearch", { scope: "repair" })
      const full = yield* unsafeCommand(valkey, "test", (c) => c.zrange(searchKey, 0, -1))
      // Lose the index (as a document written before it existed) and add a stray entry.
      yield* unsafeCommand(valkey, "test", (c) => c.del(searchKey).then(() => c.zadd(searchKey, 0, "c\u00000000000000001\u0000jo-ghost")))
      const found = (yield* maintenance.check({ scope: "repair" })).filter((i) => i.key === searchKey)
      expect(found.map((i) => (i.member ?? "").replace(/\.repair$/, "")).sort()).toEqual(["jo-axle-001", "jo-axle-002", "jo-axle-003", "jo-gear-001", "jo-gear-002", "jo-gear-003", "jo-ghost"])
      yield* maintenance.rebuild({ scope: "repair" })
      expect((yield* maintenance.check({ scope: "repair" })).filter((i) => i.key === searchKey)).toEqual([])
      expect((yield* unsafeCommand(valkey, "test", (c) => c.zrange(searchKey, 0, -1))).sort()).toEqual([...full].sort())
      expect((yield* search({ scopes: ["repair"], errorText: "overload" })).total).toBe(1)
      // A job order written before the index: no created field; the rebuild indexes it with no creation time.
      const legacy = yield* valkey.key("jobOrder", { id: "jo-gear-003.repair" })
      yield* unsafeCommand(valkey, "test", (c) => c.hdel(legacy, "created").then(() => c.del(searchKey)))
      yield* maintenance.rebuild({ scope: "repair" })
      expect((yield* search({ scopes: ["repair"], idPrefix: "jo-gear-003" })).items).toMatchObject([{ id: "jo-gear-003.repair", createdMs: null, state: "Running" }])
      expect((yield* search({ scopes: ["repair"] })).total).toBe(6)
    })
  )
})
