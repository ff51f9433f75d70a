import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { storeLayer } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import type { EngineChildConfig, FromChild, ToChild } from "./ChildMessages.js"
import { forkChild, reap } from "./ChildProcess.js"
import { putWorkMaster, submitJobs } from "./EngineIsland.js"
import { JOBS, STEPS } from "./Figures.js"
import { summarize, type Latency } from "./Measure.js"
import type { ServerProbe } from "./ServerProbe.js"
import { StepLog } from "./StepLog.js"
import { openWindow, type WindowFigures } from "./Window.js"

/** BENCH_ENGINE_PROCESSES=1,2,4: the engine process counts to run the island with. */
export const ENGINE_PROCESSES = (process.env["BENCH_ENGINE_PROCESSES"] ?? "1,2")
  .split(",")
  .map((n) => Number(n.trim()))
  .filter((n) => Number.isInteger(n) && n > 0)

/**
 * Jobs run through fresh children before the measured run (BENCH_WARMUP_JOBS). With 100, a child
 * still spent about 2× the in-process engine's CPU per step (its JIT had not tiered up yet); with
 * 1000 it is on a par.
 */
const WARMUP_JOBS = Number(process.env["BENCH_WARMUP_JOBS"] ?? 1000)

type Report = Extract<FromChild, { readonly type: "report" }>

const childScript = fileURLToPath(new URL("./EngineChild.ts", import.meta.url))

/** An engine child and the first message of each type it sends. */
const startChild = (config: EngineChildConfig) => {
  const { child, exited, message, tell } = forkChild<FromChild, ToChild>(childScript, `engine child ${config.consumer}`, "BENCH_ENGINE_CHILD", config)
  return { child, ready: message("ready"), report: message("report"), exited, tell }
}

export interface ProcessesRun {
  readonly processes: number
  readonly stepsPerSecond: number
  readonly loaded: Latency
  readonly window: WindowFigures
  readonly reports: ReadonlyArray<Report>
}

/** One island on a fresh prefix with `n` engine child processes; the parent submits JOBS job orders. */
const runWith = async (url: string, probe: ServerProbe, n: number): Promise<ProcessesRun> => {
  const prefix = randomPrefix("bench-engines")
  const children = Array.from({ length: n }, (_, i) => startChild({ url, prefix, consumer: `engine-${i}` }))
  let failed = true
  try {
    await Promise.all(children.map((c) => c.ready))
    const store = storeLayer({ url, prefix, connectionName: "bench-submitter" })
    const window = await Effect.runPromise(
      Effect.gen(function* () {
        yield* putWorkMaster()
        // A fresh process runs its first steps cold (JIT); the in-process engine had its warm-up too.
        yield* submitJobs(probe, WARMUP_JOBS, false)
        const window = yield* Effect.promise(() => openWindow(probe))
        for (const c of children) c.tell({ type: "start" })
        yield* submitJobs(probe, JOBS, false, { from: WARMUP_JOBS })
        return yield* Effect.promise(() => window.close())
      }).pipe(Effect.provide(store))
    )
    for (const c of children) c.tell({ type: "stop" })
    const reports = await Promise.all(children.map((c) => c.report))
    const loaded = summarize(`${n} processes`, StepLog.gaps(reports.flatMap((r) => r.steps)))
    failed = false
    return { processes: n, stepsPerSecond: (JOBS * STEPS) / window.seconds, loaded, window, reports }
  } finally {
    await Promise.all(children.map((c) => reap(c.child, c.exited, failed)))
  }
}

/** Runs the island with each count of ENGINE_PROCESSES and prints steps/s and CPU per child. */
export const runEngineProcesses = async (url: string, probe: ServerProbe): Promise<ReadonlyArray<ProcessesRun>> => {
  const runs: Array<ProcessesRun> = []
  if (ENGINE_PROCESSES.length === 0) return runs
  for (const n of ENGINE_PROCESSES) runs.push(await runWith(url, probe, n))
  const steps = JOBS * STEPS
  console.log(`\nSFC engine in N child processes on one island, ${JOBS} jobs at once (the parent only submits)`)
  console.log(
    `  ${"N".padStart(3)} ${"steps/s".padStart(9)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"sent/step".padStart(10)} ` +
      `${"server µs/step".padStart(15)} ${"Node µs/step".padStart(13)} ${"parent µs/step".padStart(15)}  per child: Node µs per step it dispatched (steps)`
  )
  for (const run of runs) {
    const cpu = run.reports.reduce((sum, r) => sum + r.cpuMicros, 0)
    const sent = run.reports.reduce((sum, r) => sum + r.sent, 0)
    const perChild = run.reports.map((r) => `${(r.cpuMicros / Math.max(1, r.steps.length)).toFixed(0)} (${r.steps.length})`).join(", ")
    console.log(
      `  ${String(run.processes).padStart(3)} ${run.stepsPerSecond.toFixed(0).padStart(9)} ${run.loaded.median.toFixed(1).padStart(8)} ` +
        `${run.loaded.p99.toFixed(1).padStart(8)} ${(sent / steps).toFixed(2).padStart(10)} ${(run.window.server.cpuMicros / steps).toFixed(0).padStart(15)} ` +
        `${(cpu / steps).toFixed(0).padStart(13)} ${(run.window.nodeCpuMicros / steps).toFixed(0).padStart(15)}  ${perChild}`
    )
  }
  return runs
}
