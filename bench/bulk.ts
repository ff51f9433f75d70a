/**
 * The bulk action suite: a bulk abort of 1,000 job orders out of `BENCH_BULK_JOBS` (default
 * 100,000) in one scope, as an operator runs it from the console: the island daemon as a process
 * of its own (`DaemonRun.ts`) against the run's server and a mosquitto, and batches of 100 posted
 * to `POST /api/console/bulk/abort` with an operator's token, each from the previous batch's
 * cursor, until the search is done. Beside it, the least a page of job orders costs on the same
 * server in the same run (one ZRANGE page of 50 and one read of those documents). Target: the
 * 1,000 in at most 10 s. Afterwards the search counts what changed: exactly those 1,000 Aborted.
 */
import { Effect, Layer } from "effect"
import { JobStates } from "@microdcs/job-state"
import { JobOrderDao, JobOrderSearch, storeLayer } from "@microdcs/store"
import { randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { runDaemon } from "./DaemonRun.js"
import { loadJobOrders } from "./LoadJobOrders.js"

const JOBS = Number(process.env["BENCH_BULK_JOBS"] ?? 100_000)
const SCOPE = "bench-bulk"
/** Ids `jo-b-000000`…: the prefix `jo-b-000` names exactly the first 1,000. */
const ID_PREFIX = "jo-b-"
const TARGET_PREFIX = "jo-b-000"
const TARGET_JOBS = 1000
const BATCH = 100
const PAGE = 50
const TARGET_SECONDS = 10
const baselineSamples = { warmup: 20, samples: Number(process.env["BENCH_BULK_SAMPLES"] ?? 200) }
const TOKEN = "bench-bulk-operator"
const READY = JobStates.NotAllowedToStart_Ready
/** The state names the search takes. */
const READY_NAME = "NotAllowedToStart_Ready"
const ABORTED_NAME = "Aborted"

const at = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN
const sortedOf = (samples: ReadonlyArray<number>) => [...samples].sort((a, b) => a - b)
const fmt = (n: number, digits = 2) => n.toFixed(digits)

/** The baseline: one ZRANGE page of 50 of the scope's list and one read of those documents, median and p95 in ms. */
const baselineRead = Effect.gen(function* () {
  const dao = yield* JobOrderDao
  const samples: Array<number> = []
  for (let i = 0; i < baselineSamples.warmup + baselineSamples.samples; i++) {
    const offset = (i * PAGE) % (JOBS - PAGE)
    const start = performance.now()
    const page = yield* dao.list(SCOPE, { offset, count: PAGE })
    yield* dao.getMany(page.items.map((item) => item.id))
    if (i >= baselineSamples.warmup) samples.push(performance.now() - start)
  }
  const sorted = sortedOf(samples)
  return { median: at(sorted, 0.5), p95: at(sorted, 0.95) }
})

/** How many job orders of the scope the search finds for `filter` (exact, or the run fails). */
const countOf = (filter: { readonly idPrefix?: string; readonly states?: ReadonlyArray<string> }) =>
  Effect.gen(function* () {
    const counted = yield* (yield* JobOrderSearch).count({ scopes: [SCOPE], ...filter })
    if (!counted.totalExact) return yield* Effect.die(new Error(`the count of ${JSON.stringify(filter)} is not exact (${counted.total})`))
    return counted.total
  })

/** Exactly the target's job orders Aborted, every other one still as loaded. */
const verify = Effect.gen(function* () {
  const found = {
    abortedTargets: yield* countOf({ idPrefix: TARGET_PREFIX, states: [ABORTED_NAME] }),
    aborted: yield* countOf({ states: [ABORTED_NAME] }),
    ready: yield* countOf({ states: [READY_NAME] })
  }
  const expected = { abortedTargets: TARGET_JOBS, aborted: TARGET_JOBS, ready: JOBS - TARGET_JOBS }
  const wrong = Object.entries(expected).filter(([k, v]) => found[k as keyof typeof found] !== v)
  if (wrong.length > 0) throw new Error(`after the bulk abort: ${JSON.stringify(found)}, expected ${JSON.stringify(expected)}`)
  return found
})

interface BatchReply {
  readonly ok?: boolean
  readonly outcomes?: ReadonlyArray<{ readonly outcome: string; readonly state?: string | null; readonly message?: string }>
  readonly next?: string | null
  readonly total?: number
  readonly message?: string
}

/** One batch through the daemon's route, as the console's page posts it: its reply and its time in ms. */
const postBatch = async (port: number, after: string | null) => {
  const body = { query: `scope=${SCOPE}&idPrefix=${TARGET_PREFIX}`, batch: BATCH, comment: "bench: bulk abort", ...(after === null ? {} : { after }) }
  const start = performance.now()
  const reply = await fetch(`http://127.0.0.1:${port}/api/console/bulk/abort`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", origin: `http://127.0.0.1:${port}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000)
  })
  const answer = (await reply.json()) as BatchReply
  const ms = performance.now() - start
  if (reply.status !== 200 || answer.ok !== true) throw new Error(`batch refused (${reply.status}): ${answer.message ?? JSON.stringify(answer)}`)
  return { answer, ms }
}

/** Every batch until the search is done: the batches' times, the outcomes by kind, the wall time. */
const bulkAbort = async (port: number) => {
  const batches: Array<number> = []
  const outcomes: Record<string, number> = {}
  let total = 0
  let after: string | null = null
  const start = performance.now()
  do {
    const { answer, ms } = await postBatch(port, after)
    batches.push(ms)
    total = answer.total ?? total
    for (const o of answer.outcomes ?? []) outcomes[`${o.outcome}${o.state ? ` ${o.state}` : ""}`] = (outcomes[`${o.outcome}${o.state ? ` ${o.state}` : ""}`] ?? 0) + 1
    const refused = (answer.outcomes ?? []).find((o) => o.outcome !== "done")
    if (refused !== undefined) console.log(`  a job was not aborted: ${JSON.stringify(refused)}`)
    after = answer.next ?? null
  } while (after !== null)
  return { batches, outcomes, total, seconds: (performance.now() - start) / 1000 }
}

/** Waits for the daemon's `/readyz`; the island must be up for the route to run. */
const waitReady = async (get: (path: string) => Promise<{ status: number; body: string }>) => {
  const until = performance.now() + 120_000
  let last = ""
  while (performance.now() < until) {
    const reply = await get("/readyz").catch((e: unknown) => ({ status: 0, body: String(e) }))
    if (reply.status === 200) return
    last = reply.body
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`the daemon was not ready within 120 s: ${last.slice(0, 500)}`)
}

type Bulk = Awaited<ReturnType<typeof bulkAbort>>

const report = (bulk: Bulk, baseline: { median: number; p95: number }, loadSeconds: number, verified: Record<string, number>) => {
  const sorted = sortedOf(bulk.batches)
  const median = at(sorted, 0.5)
  const perJob = (bulk.seconds * 1000) / TARGET_JOBS
  const row = (name: string, value: string, ratio = "", goal = "") => console.log(`  ${name.padEnd(52)} ${value.padStart(12)} ${ratio.padStart(10)}  ${goal}`)
  console.log(`\nbulk: abort ${TARGET_JOBS} of ${JOBS} job orders in one scope (loaded in ${fmt(loadSeconds, 1)} s) through the daemon's POST /api/console/bulk/abort, ${BATCH} a batch`)
  row("", "value", "× baseline")
  row(`baseline: ZRANGE page of ${PAGE} + document read, median`, `${fmt(baseline.median)} ms`, "1.00")
  row("baseline p95", `${fmt(baseline.p95)} ms`)
  row(`bulk abort of ${TARGET_JOBS}, total`, `${fmt(bulk.seconds)} s`, "", `≤ ${TARGET_SECONDS} s ${bulk.seconds <= TARGET_SECONDS ? "ok" : "MISSED"}`)
  row(`batch of ${BATCH}, median (${bulk.batches.length} batches)`, `${fmt(median)} ms`, fmt(median / baseline.median))
  row("first batch (the daemon's code still cold)", `${fmt(bulk.batches[0] ?? Number.NaN)} ms`, fmt((bulk.batches[0] ?? Number.NaN) / baseline.median))
  row(`batch of ${BATCH}, p95`, `${fmt(at(sorted, 0.95))} ms`, fmt(at(sorted, 0.95) / baseline.p95))
  row("per job (total ÷ jobs)", `${fmt(perJob)} ms`, fmt(perJob / baseline.median))
  row("jobs/s", fmt(TARGET_JOBS / bulk.seconds, 0))
  console.log(`  the search's total: ${bulk.total}; outcomes: ${JSON.stringify(bulk.outcomes)}`)
  console.log(`  after: ${verified["abortedTargets"]} of prefix ${TARGET_PREFIX} Aborted, ${verified["aborted"]} Aborted in the scope, ${verified["ready"]} still ${READY_NAME}: ok`)
}

const daemonEnv = (url: string, brokerUrl: string, prefix: string): Record<string, string> => ({
  VALKEY_URL: url,
  VALKEY_PREFIX: prefix,
  MQTT_URL: brokerUrl,
  MQTT_TOPIC_PREFIX: prefix,
  ISLAND_INSTANCE_ID: "bench-bulk",
  // The storage role (PGlite) adds nothing to a bulk abort but a slower start.
  ISLAND_ROLES: "-storage",
  HTTP_OPERATOR_TOKEN: TOKEN,
  LOG_LEVEL: "info",
  ...(process.env["BENCH_BULK_NODE_OPTIONS"] === undefined ? {} : { NODE_OPTIONS: process.env["BENCH_BULK_NODE_OPTIONS"] })
})

export const runBulkBench = async (url: string): Promise<void> => {
  const prefix = randomPrefix("bench-bulk")
  const store = Layer.orDie(storeLayer({ url, prefix }))
  const run = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.runPromise(Effect.provide(effect, store) as Effect.Effect<A, E>)
  const loadStart = performance.now()
  await run(loadJobOrders({ scope: SCOPE, count: JOBS, idPrefix: ID_PREFIX, stateOf: () => READY }))
  const loadSeconds = (performance.now() - loadStart) / 1000
  const before = await run(Effect.all([countOf({ idPrefix: TARGET_PREFIX }), countOf({ states: [READY_NAME] })]))
  if (before[0] !== TARGET_JOBS || before[1] !== JOBS) throw new Error(`loaded ${before[1]} ready, ${before[0]} with the prefix ${TARGET_PREFIX}`)
  const broker = await startMosquitto()
  const daemon = runDaemon(daemonEnv(url, broker.url, prefix))
  try {
    await waitReady(daemon.get)
    const baseline = await run(baselineRead)
    const bulk = await bulkAbort(await daemon.port)
    report(bulk, baseline, loadSeconds, await run(verify))
  } finally {
    await daemon.stop()
    await broker.stop()
  }
}
