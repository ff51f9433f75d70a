/**
 * The search suite: job order search (`JobOrderSearch`) on a scope of `BENCH_SEARCH_JOBS`
 * (default 100,000) job orders, each page as a ratio to the least a page of job orders can cost on
 * the same server in the same run: one ZRANGE page of 50 of the scope's list and one HMGET of
 * each of those 50 documents, pipelined. Target: every search page ≤ 5× that baseline.
 */
import { Effect, Layer } from "effect"
import { encodeJobOrderRecord, type JobState, JobStates } from "@microdcs/job-state"
import { JobOrderDao, JobOrderSearch, type JobOrderSearchFilter, storeLayer, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { latency, summarize } from "./Measure.js"

const JOBS = Number(process.env["BENCH_SEARCH_JOBS"] ?? 100_000)
const SCOPE = "bench-search"
const PAGE = 50
const TARGET = 5
const samples = { warmup: 20, samples: Number(process.env["BENCH_SEARCH_SAMPLES"] ?? 200) }

const fmt = (n: number, digits = 2) => n.toFixed(digits)

/** A spread of states: most stored or ended, some running, one in fifty aborted with a reason. */
const stateOf = (i: number): JobState =>
  i % 50 === 7 ? JobStates.Aborted : i % 10 === 3 ? JobStates.Running : i % 3 === 0 ? JobStates.Ended_Completed : JobStates.AllowedToStart_Ready

const record = (i: number) => {
  const id = `jo-${String(i).padStart(6, "0")}`
  const state = stateOf(i)
  const comment = state === JobStates.Aborted ? (i % 100 === 7 ? "step Drill: spindle overload" : "operator abort") : undefined
  return { id, doc: encodeJobOrderRecord({ JobOrderID: id, Priority: i % 10, WorkMasterID: [{ ID: `wm-${i % 40}` }] } as never, state, comment), priority: i % 10 }
}

/** Loads the scope in batches of 500 (putMany), and notes the clock around one stretch for a created-time window. */
const load = Effect.gen(function* () {
  const dao = yield* JobOrderDao
  const started = performance.now()
  let window = { from: 0, to: 0 }
  for (let i = 0; i < JOBS; i += 500) {
    if (i === Math.floor(JOBS / 2 / 500) * 500) window = { ...window, from: Date.now() }
    const batch = Array.from({ length: Math.min(500, JOBS - i) }, (_, k) => record(i + k))
    yield* dao.putMany(batch.map((r) => ({ ...r, scope: SCOPE, expectedVersion: 0, change: "Store" })))
    if (window.from !== 0 && window.to === 0 && i >= Math.floor(JOBS / 2 / 500) * 500 + 1000) window = { ...window, to: Date.now() }
  }
  console.log(`  loaded ${JOBS} job orders in ${fmt((performance.now() - started) / 1000, 1)} s`)
  return window
})

/** The least a page of job orders costs: one ZRANGE page of the list, one HMGET per document, pipelined. */
const baselineRead = Effect.gen(function* () {
  const valkey = yield* Valkey
  const list = yield* valkey.key("jobOrderList", { scope: SCOPE })
  const docKeys = Array.from({ length: JOBS }, (_, i) => valkey.keys.key("jobOrder", { id: record(i).id }) as string)
  return yield* latency(`ZRANGE page of ${PAGE} + HMGET of each (baseline)`, samples, (i) =>
    unsafeCommand(valkey, "baseline", async (c) => {
      const offset = (i * PAGE) % (JOBS - PAGE)
      const ids = await c.zrevrange(list, offset, offset + PAGE - 1)
      const p = c.pipeline()
      for (const id of ids) p.hmget(docKeys[Number(id.slice(3))]!, "v", "scope", "doc")
      return p.exec()
    })
  )
})

const casesOf = (window: { from: number; to: number }): ReadonlyArray<readonly [string, JobOrderSearchFilter]> => {
  const scopes = [SCOPE]
  return [
    ["no filter (newest first)", { scopes }],
    ["id prefix jo-0421 (100 match)", { scopes, idPrefix: "jo-0421" }],
    ["id prefix jo-01 (10,000 match)", { scopes, idPrefix: "jo-01" }],
    ["state Running (1 in 10)", { scopes, states: ["Running"] }],
    ["states Running or Aborted", { scopes, states: ["Running", "Aborted"] }],
    ["created in a 1,000-job window", { scopes, createdFrom: window.from, createdTo: window.to }],
    ["ended (any time)", { scopes, endedFrom: 0 }],
    ["combined: Aborted + work master wm-7", { scopes, states: ["Aborted"], workMaster: "wm-7" }],
    ["combined: id prefix jo-04 + Running (1,000)", { scopes, idPrefix: "jo-04", states: ["Running"] }],
    ["error text 'overload'", { scopes, errorText: "overload" }],
    ["all scopes (registry), state Aborted", { states: ["Aborted"] }]
  ]
}

/** The first page and the second (through the first's cursor) of each case: median and p95. */
const measureCases = (cases: ReturnType<typeof casesOf>) =>
  Effect.gen(function* () {
    const search = yield* JobOrderSearch
    const rows: Array<{ name: string; median: number; p95: number; total: string }> = []
    for (const [name, filter] of cases) {
      const first = yield* search.search(filter, { limit: PAGE })
      const total = `${first.total}${first.totalExact ? "" : " (at most)"}`
      rows.push({ ...(yield* timed(name, () => search.search(filter, { limit: PAGE }))), total })
      if (first.next !== null) rows.push({ ...(yield* timed(`${name}, page 2`, () => search.search(filter, { limit: PAGE, after: first.next! }))), total: "" })
    }
    return rows
  })

const timed = <A, E, R>(name: string, run: () => Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const times: Array<number> = []
    for (let i = 0; i < samples.warmup + samples.samples; i++) {
      const start = performance.now()
      yield* run()
      if (i >= samples.warmup) times.push(performance.now() - start)
    }
    return summarizeP95(name, times)
  })

/** The exact counts (`count`), which check a non-indexed filter member by member, and the index's size. */
const countsAndSize = (cases: ReturnType<typeof casesOf>) =>
  Effect.gen(function* () {
    const search = yield* JobOrderSearch
    const valkey = yield* Valkey
    for (const [name, filter] of cases.filter(([n]) => n.startsWith("combined: id") || n.startsWith("error"))) {
      const row = yield* timed(`count(): ${name}`, () => search.count(filter))
      const count = yield* search.count(filter)
      console.log(`  ${row.name.padEnd(52)} ${fmt(row.median, 3).padStart(6)} ms median, ${fmt(row.p95, 3)} ms p95, total ${count.total}${count.totalExact ? " (exact)" : " (at most)"}`)
    }
    const [searchKey, listKey] = [yield* valkey.key("jobOrderSearch", { scope: SCOPE }), yield* valkey.key("jobOrderList", { scope: SCOPE })]
    const [searchBytes, listBytes] = yield* unsafeCommand(valkey, "memory", (c) =>
      Promise.all([c.call("MEMORY", "USAGE", searchKey, "SAMPLES", "0"), c.call("MEMORY", "USAGE", listKey, "SAMPLES", "0")])
    )
    console.log(`  index size: search ${fmt(Number(searchBytes) / JOBS, 0)} B per job order, priority list ${fmt(Number(listBytes) / JOBS, 0)} B`)
  })

const program = Effect.gen(function* () {
  console.log(`\nsearch: job order search on one scope of ${JOBS} job orders, pages of ${PAGE}`)
  const cases = casesOf(yield* load)
  const baseline = yield* baselineRead
  const rows = yield* measureCases(cases)
  console.log(`  ${"page".padEnd(52)} ${"median ms".padStart(10)} ${"p95 ms".padStart(8)} ${"× base".padStart(7)} ${"total".padStart(16)}  target ≤ ${TARGET}×`)
  console.log(`  ${baseline.name.padEnd(52)} ${fmt(baseline.median, 3).padStart(10)} ${fmt(baseline.p99, 3).padStart(8)} ${fmt(1).padStart(7)}`)
  for (const r of rows) {
    const ratio = r.median / baseline.median
    console.log(`  ${r.name.padEnd(52)} ${fmt(r.median, 3).padStart(10)} ${fmt(r.p95, 3).padStart(8)} ${fmt(ratio).padStart(7)} ${r.total.padStart(16)}  ${ratio <= TARGET ? "ok" : "MISSED"}`)
  }
  yield* countsAndSize(cases)
})

/** Median and p95 of a sample set. */
const summarizeP95 = (name: string, times: ReadonlyArray<number>) => {
  const sorted = [...times].sort((a, b) => a - b)
  return { name, median: summarize(name, sorted).median, p95: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? Number.NaN }
}

export const runSearchBench = (url: string) =>
  Effect.runPromise(program.pipe(Effect.provide(Layer.orDie(storeLayer({ url, prefix: randomPrefix("bench-search") })))))
