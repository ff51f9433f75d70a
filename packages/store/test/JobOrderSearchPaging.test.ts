import { createHash } from "node:crypto"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { filterFingerprint, JobOrderDao, type JobOrderSearchFilter, JobOrderSearch, ValkeyLayer } from "@microdcs/store"

// Paging while the walked job orders change (as a bulk action does), the error text's case, forged cursors.
const services = Layer.mergeAll(JobOrderSearch.Default, JobOrderDao.Default).pipe(
  Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("spage") }))
)

const stateEntries: Record<string, ReadonlyArray<readonly [string, number]>> = {
  Running: [["Running", 3]],
  Ended_Completed: [["Ended", 5], ["Completed", 1]],
  Aborted: [["Aborted", 6]]
}

interface Facts {
  readonly state: string
  readonly priority: number
  readonly workMaster?: string
  readonly comment?: string
}

const record = (id: string, f: Facts) =>
  JSON.stringify({
    JobOrder: { JobOrderID: id, Priority: f.priority, ...(f.workMaster ? { WorkMasterID: [{ ID: f.workMaster }] } : {}) },
    State: stateEntries[f.state]!.map(([Text, StateNumber]) => ({ StateText: { Text, Locale: "en" }, StateNumber })),
    ...(f.comment ? { Comment: f.comment } : {})
  })

const put = (scope: string, id: string, f: Facts) =>
  Effect.flatMap(JobOrderDao, (dao) => dao.put({ id, scope, doc: record(id, f), priority: f.priority, expectedVersion: -1 }))

const driverOf = (cursor: string): unknown => JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")).d

/**
 * Pages through `filter` two at a time; every job order a page hands out is rewritten with
 * `change` before the next page is asked for. Returns the ids in the order handed out.
 */
const walkChanging = (filter: JobOrderSearchFilter, driver: string, change: (id: string) => Facts) =>
  Effect.gen(function* () {
    const seen: Array<string> = []
    let after: string | undefined
    for (let pages = 0; pages < 40; pages++) {
      const page = yield* Effect.flatMap(JobOrderSearch, (s) => s.search(filter, { limit: 2, ...(after ? { after } : {}) }))
      for (const item of page.items) {
        seen.push(item.id)
        yield* put(item.scope, item.id, change(item.id))
      }
      if (page.next === null) return seen
      expect(driverOf(page.next)).toBe(driver)
      after = page.next
    }
    return seen
  })

/** Six job orders `{scope}-0..5` with `facts`, plus decoys that make the wanted walk the narrowest. */
const seed = (scope: string, facts: Facts, decoys: ReadonlyArray<Facts> = []) =>
  Effect.gen(function* () {
    const ids = Array.from({ length: 6 }, (_, i) => `${scope}-${i}`)
    for (const id of ids) yield* put(scope, id, facts)
    for (const [i, d] of decoys.entries()) yield* put(scope, `${scope}-decoy-${i}`, d)
    return ids
  })

const cases: ReadonlyArray<{ driver: string; filter: (scope: string) => JobOrderSearchFilter; facts: Facts; decoys?: ReadonlyArray<Facts>; change: Facts }> = [
  // c: no filter; the state falls (Running to Aborted) and the priority too.
  { driver: "c", filter: (s) => ({ scopes: [s] }), facts: { state: "Running", priority: 5, workMaster: "wm" }, change: { state: "Aborted", priority: 1, workMaster: "wm", comment: "boom" } },
  { driver: "w", filter: (s) => ({ scopes: [s], workMaster: "wm" }), facts: { state: "Running", priority: 5, workMaster: "wm" }, change: { state: "Aborted", priority: 1, workMaster: "wm" } },
  { driver: "s", filter: (s) => ({ scopes: [s], states: ["Running"] }), facts: { state: "Running", priority: 5 }, change: { state: "Running", priority: 1, comment: "lowered" } },
  {
    driver: "x",
    filter: (s) => ({ scopes: [s], states: ["Running"], workMaster: "wm" }),
    facts: { state: "Running", priority: 5, workMaster: "wm" },
    decoys: [{ state: "Running", priority: 0 }, { state: "Aborted", priority: 0, workMaster: "wm" }],
    change: { state: "Running", priority: 1, workMaster: "wm" }
  },
  // Several states walk as one: a job order moving into a state listed later is not met again there.
  { driver: "s", filter: (s) => ({ scopes: [s], states: ["Running", "Aborted"] }), facts: { state: "Running", priority: 5 }, change: { state: "Aborted", priority: 1 } },
  {
    driver: "x",
    filter: (s) => ({ scopes: [s], states: ["Running", "Aborted"], workMaster: "wm" }),
    facts: { state: "Running", priority: 5, workMaster: "wm" },
    decoys: [{ state: "Running", priority: 0 }, { state: "Running", priority: 0 }, { state: "Ended_Completed", priority: 0, workMaster: "wm" }],
    change: { state: "Aborted", priority: 1, workMaster: "wm" }
  },
  { driver: "p", filter: (s) => ({ scopes: [s], priorityMin: -100 }), facts: { state: "Running", priority: 5 }, change: { state: "Aborted", priority: 5 } },
  { driver: "e", filter: (s) => ({ scopes: [s], endedFrom: 0 }), facts: { state: "Aborted", priority: 5 }, change: { state: "Aborted", priority: 1 } },
  { driver: "r", filter: (s) => ({ scopes: [s], errorText: "boom" }), facts: { state: "Aborted", priority: 5, comment: "boom" }, change: { state: "Aborted", priority: 1, comment: "boom again" } },
  // f walks up: the state rises (Aborted to Running).
  { driver: "f", filter: (s) => ({ scopes: [s], idPrefix: `${s}-` }), facts: { state: "Aborted", priority: 5 }, change: { state: "Running", priority: 9 } }
]

layer(services, { timeout: 60_000 })("JobOrderSearch paging", (it) => {
  for (const c of cases) {
    it.effect(`driver ${c.driver} (${JSON.stringify(c.filter("").states ?? [])}): a job order changed after it was handed out is handed out once, none is skipped`, () =>
      Effect.gen(function* () {
        const scope = `walk-${c.driver}-${c.filter("").states?.length ?? 0}`
        const ids = yield* seed(scope, c.facts, c.decoys)
        const seen = yield* walkChanging(c.filter(scope), c.driver, () => c.change)
        expect([...seen].sort()).toEqual(ids)
      })
    )
  }

  it.effect("driver w: each job aborted as it is seen leaves the filter's walk in order, once each", () =>
    Effect.gen(function* () {
      const ids = yield* seed("abort", { state: "Running", priority: 0, workMaster: "wm" })
      const seen = yield* walkChanging({ scopes: ["abort"], workMaster: "wm" }, "w", () => ({ state: "Aborted", priority: 0, workMaster: "wm" }))
      expect(seen).toEqual([...ids].reverse())
    })
  )

  it.effect("several states are walked as one, newest first, while each job order seen moves to the other state", () =>
    Effect.gen(function* () {
      const ids = Array.from({ length: 7 }, (_, i) => `mix-${i}`)
      for (const [i, id] of ids.entries()) yield* put("mix", id, { state: i % 2 === 0 ? "Running" : "Aborted", priority: 0 })
      let flips = 0
      const seen = yield* walkChanging({ scopes: ["mix"], states: ["Aborted", "Running"] }, "s", () => ({ state: flips++ % 2 === 0 ? "Aborted" : "Running", priority: 0 }))
      expect(seen).toEqual([...ids].reverse())
      const count = yield* Effect.flatMap(JobOrderSearch, (s) => s.count({ scopes: ["mix"], states: ["Aborted", "Running"], priorityMax: 0 }))
      expect(count).toEqual({ total: 7, totalExact: true })
    })
  )

  it.effect("a walk of several states over many chunks hands each out once, newest first", () =>
    Effect.gen(function* () {
      const states = ["Running", "Aborted", "Ended_Completed"]
      const inputs = Array.from({ length: 230 }, (_, i) => {
        const id = `many-${String(i).padStart(3, "0")}`
        return { id, scope: "many", doc: record(id, { state: states[i % 3]!, priority: 0 }), priority: 0, expectedVersion: 0 }
      })
      for (let i = 0; i < inputs.length; i += 50) yield* Effect.flatMap(JobOrderDao, (dao) => dao.putMany(inputs.slice(i, i + 50)))
      for (const limit of [7, 100]) {
        const found: Array<{ id: string; createdMs: number | null }> = []
        let after: string | undefined
        do {
          const page = yield* Effect.flatMap(JobOrderSearch, (s) => s.search({ scopes: ["many"], states }, { limit, ...(after ? { after } : {}) }))
          found.push(...page.items)
          after = page.next ?? undefined
        } while (after !== undefined)
        expect(new Set(found.map((f) => f.id)).size).toBe(230)
        const newestFirst = [...found].sort((a, b) => (b.createdMs ?? 0) - (a.createdMs ?? 0) || (a.id < b.id ? 1 : -1))
        expect(found.map((f) => f.id)).toEqual(newestFirst.map((f) => f.id))
      }
    })
  )

  it.effect("error text is case-blind for ASCII letters only, the same on both sides", () =>
    Effect.gen(function* () {
      yield* put("umlaut", "jo-upper", { state: "Aborted", priority: 0, comment: "Spindel ÜBERLAST am Motor" })
      yield* put("umlaut", "jo-lower", { state: "Aborted", priority: 0, comment: "überlast beim Bohren" })
      const find = (errorText: string) => Effect.map(Effect.flatMap(JobOrderSearch, (s) => s.search({ scopes: ["umlaut"], errorText })), (p) => p.items.map((i) => i.id))
      expect(yield* find("ÜBERLAST")).toEqual(["jo-upper"])
      expect(yield* find("überlast")).toEqual(["jo-lower"])
      expect(yield* find("überLAST")).toEqual(["jo-lower"])
      // Only A-Z fold: the Ü must be written as stored, the rest may take any case.
      expect(yield* find("ÜberLast")).toEqual(["jo-upper"])
      expect(yield* find("MOTOR")).toEqual(["jo-upper"])
      const count = yield* Effect.flatMap(JobOrderSearch, (s) => s.count({ scopes: ["umlaut"], errorText: "ÜBERLAST" }))
      expect(count).toEqual({ total: 1, totalExact: true })
    })
  )

  it.effect("a forged cursor naming a walk the filter has not is InvalidInput, not a server error", () =>
    Effect.gen(function* () {
      yield* put("forged", "jo-1", { state: "Running", priority: 0 })
      const forge = (filter: JobOrderSearchFilter, d: string, r: number) => {
        const f = createHash("sha1").update(filterFingerprint(filter)).digest("base64url").slice(0, 12)
        return Buffer.from(JSON.stringify({ v: 1, f, s: "forged", d, r, a: "" }), "utf8").toString("base64url")
      }
      const filter: JobOrderSearchFilter = { scopes: ["forged"], states: ["Running"] }
      for (const [d, r] of [["w", 1], ["x", 1], ["r", 1], ["s", 2]] as const) {
        const error = yield* Effect.flip(Effect.flatMap(JobOrderSearch, (s) => s.search(filter, { after: forge(filter, d, r) })))
        expect(error).toMatchObject({ _tag: "InvalidInput", message: expect.stringContaining("after is not a cursor this search gave") })
      }
      // The same forge with a walk the filter has goes on.
      const page = yield* Effect.flatMap(JobOrderSearch, (s) => s.search(filter, { after: forge(filter, "s", 1) }))
      expect(page.items.map((i) => i.id)).toEqual(["jo-1"])
    })
  )
})
