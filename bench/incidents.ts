/**
 * The incident view suite: one page of the island's incidents (every source: aborted jobs from the
 * failed set, failed actions, dead letters, held entries, lost consumers) on a scope with
 * `BENCH_INCIDENT_JOBS` (default 100,000) job orders, one in a hundred aborted with a job response,
 * next to the least a page can cost on the same server in the same run: one ZRANGE page of 50
 * from the scope's job order list and one read of those documents. Median and p95 of each, and
 * the ratio to the baseline's; the target is at most 5×.
 */
import { Effect, Layer } from "effect"
import { JobStates } from "@microdcs/job-state"
import { JobOrderDao, storeLayer } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { decodeCursor } from "../apps/island-daemon/src/ConsoleIncident.js"
import { incidentPage } from "../apps/island-daemon/src/ConsoleIncidents.js"
import { loadJobOrders } from "./LoadJobOrders.js"

const JOBS = Number(process.env["BENCH_INCIDENT_JOBS"] ?? 100_000)
const SCOPE = "bench-incidents"
const PAGE = 50
const WARMUP = 20
const SAMPLES = Number(process.env["BENCH_INCIDENT_SAMPLES"] ?? 40)
const TARGET = 5

interface Figures {
  readonly name: string
  readonly median: number
  readonly p95: number
}

const at = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN

/** Times `run` one call at a time after a warm-up: median and p95 in ms. */
const measure = <E, R>(name: string, run: () => Effect.Effect<unknown, E, R>) =>
  Effect.gen(function* () {
    for (let i = 0; i < WARMUP; i++) yield* run()
    const samples: Array<number> = []
    for (let i = 0; i < SAMPLES; i++) {
      const start = performance.now()
      yield* run()
      samples.push(performance.now() - start)
    }
    samples.sort((a, b) => a - b)
    return { name, median: at(samples, 0.5), p95: at(samples, 0.95) } satisfies Figures
  })

const program = Effect.gen(function* () {
  const loadStart = performance.now()
  yield* loadJobOrders({
    scope: SCOPE,
    count: JOBS,
    idPrefix: "jo-i-",
    stateOf: (i) => (i % 100 === 7 ? JobStates.Aborted : JobStates.NotAllowedToStart_Ready),
    respond: (i) => (i % 100 === 7 ? { state: "Aborted", reason: `station error on step ${i % 5}` } : undefined)
  })
  const loadSeconds = (performance.now() - loadStart) / 1000
  const dao = yield* JobOrderDao
  // The load's own check: the last job order is listed, so the scope holds them all.
  const last = yield* dao.list(SCOPE, { offset: JOBS - 1, count: 2 })
  if (last.items.length !== 1) return yield* Effect.die(new Error(`the scope lists ${JOBS - 1 + last.items.length} job orders, not ${JOBS}`))
  const all = { kinds: new Set<never>(), scope: undefined, cursor: undefined, limit: PAGE }
  const first = yield* incidentPage(all)
  const cursor = first.next === null ? undefined : decodeCursor(first.next)
  const baseline = yield* measure(`ZRANGE page of ${PAGE} + document read (baseline)`, () =>
    Effect.flatMap(dao.list(SCOPE, { offset: 0, count: PAGE }), (page) => dao.getMany(page.items.map((i) => i.id)))
  )
  const rows = [
    yield* measure(`incident page, first ${PAGE}, every source`, () => incidentPage(all)),
    yield* measure(`incident page, next ${PAGE} (cursor)`, () => incidentPage({ ...all, cursor })),
    yield* measure(`incident page, aborted jobs only, one scope`, () => incidentPage({ ...all, kinds: new Set(["aborted-job"] as const), scope: SCOPE }))
  ]
  console.log(`\nincidents: one page of the incident view, ${JOBS} job orders in one scope, ${JOBS / 100} aborted (loaded in ${loadSeconds.toFixed(1)} s)`)
  console.log(`  ${"read".padEnd(50)} ${"median ms".padStart(10)} ${"p95 ms".padStart(8)} ${"× median".padStart(9)} ${"× p95".padStart(6)}  target`)
  for (const row of [baseline, ...rows]) {
    const ratio = row.median / baseline.median
    const goal = row === baseline ? "" : `≤ ${TARGET}× ${ratio <= TARGET ? "ok" : "MISSED"}`
    console.log(
      `  ${row.name.padEnd(50)} ${row.median.toFixed(2).padStart(10)} ${row.p95.toFixed(2).padStart(8)} ${ratio.toFixed(2).padStart(9)} ${(row.p95 / baseline.p95).toFixed(2).padStart(6)}  ${goal}`
    )
  }
  console.log(`  first page: ${first.items.length} items, ${first.items.filter((i) => i.kind === "aborted-job").length} aborted jobs`)
})

export const runIncidentsBench = (url: string) =>
  Effect.runPromise(program.pipe(Effect.provide(Layer.orDie(storeLayer({ url, prefix: randomPrefix("bench-incidents") })))))
