/**
 * The console suite: what the island console reads for a page's first render on a big island
 * (a scope with `BENCH_CONSOLE_JOBS`, default 10,000, job orders), next to the least a page of
 * job orders can cost (the scope list's page and one MGET of its documents) on the same server.
 * The reads are the daemon's own view functions, run in this process against the store.
 */
import { Effect, Layer } from "effect"
import { encodeJobOrderRecord, JobStates } from "@microdcs/job-state"
import { JobOrderDao, storeLayer } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { listJobOrders } from "@microdcs/job-control"
import { jobView } from "../apps/island-daemon/src/ConsoleJobView.js"
import { scopeJobOrders } from "../apps/island-daemon/src/ConsoleScopeView.js"
import { latency } from "./Measure.js"

const JOBS = Number(process.env["BENCH_CONSOLE_JOBS"] ?? 10_000)
const SCOPE = "bench-console"
const PAGE = 50
const samples = { warmup: 5, samples: 30 }

const fmt = (n: number, digits = 2) => n.toFixed(digits)

const program = Effect.gen(function* () {
  const dao = yield* JobOrderDao
  // One job order in ten Running, the rest stored: a state filter has to read on to fill its page.
  const ids = Array.from({ length: JOBS }, (_, i) => `jo-c-${String(i).padStart(6, "0")}`)
  for (let i = 0; i < ids.length; i += 500) {
    yield* dao.putMany(
      ids.slice(i, i + 500).map((id, k) => {
        const running = (i + k) % 10 === 0
        return {
          id,
          scope: SCOPE,
          doc: encodeJobOrderRecord({ JobOrderID: id, Priority: 5 } as never, running ? JobStates.Running : JobStates.NotAllowedToStart_Ready),
          priority: 5,
          expectedVersion: 0,
          change: running ? "Run" : "Store"
        }
      })
    )
  }
  const baseline = yield* latency(`list page of ${PAGE} + MGET (baseline)`, samples, () =>
    Effect.flatMap(dao.list(SCOPE, { offset: 0, count: PAGE }), (page) => dao.getMany(page.items.map((i) => i.id)))
  )
  const rows = [
    yield* latency(`scope page, first ${PAGE}`, samples, () => scopeJobOrders(SCOPE, { cursor: "0", limit: PAGE })),
    yield* latency(`scope page, last ${PAGE} (cursor)`, samples, () => scopeJobOrders(SCOPE, { cursor: String(JOBS - PAGE), limit: PAGE })),
    yield* latency(`scope page, state=Running (1 in 10)`, samples, () => scopeJobOrders(SCOPE, { cursor: "0", limit: PAGE, state: "Running" })),
    yield* latency(`scope page, a state none has (index)`, samples, () => scopeJobOrders(SCOPE, { cursor: "0", limit: PAGE, state: "Aborted" })),
    yield* latency(`scope page, search by id`, samples, () => scopeJobOrders(SCOPE, { cursor: "0", limit: PAGE, id: ids[JOBS >> 1] })),
    // What `/api/scopes/{scope}/joborders?limit=1000` reads: a page of the list and its documents, decoded.
    yield* latency(`API list page of 1000`, samples, () => listJobOrders(SCOPE, { offset: 0, limit: 1000 })),
    // A job first opened reads the scope's change stream for its history; a refresh reads only what came since.
    yield* latency(`job page, first open (history from ${JOBS} changes)`, samples, (i) => jobView(ids[i]!)),
    yield* latency(`job page, refresh`, samples, () => jobView(ids[0]!))
  ]
  console.log(`\nconsole: first-render reads on a scope with ${JOBS} job orders`)
  console.log(`  ${"read".padEnd(52)} ${"median ms".padStart(10)} ${"p99 ms".padStart(9)} ${"× baseline".padStart(11)}`)
  for (const row of [baseline, ...rows]) {
    console.log(`  ${row.name.padEnd(52)} ${fmt(row.median).padStart(10)} ${fmt(row.p99).padStart(9)} ${fmt(row.median / baseline.median).padStart(11)}`)
  }
})

export const runConsoleBench = (url: string) =>
  Effect.runPromise(program.pipe(Effect.provide(Layer.orDie(storeLayer({ url, prefix: randomPrefix("bench-console") })))))
