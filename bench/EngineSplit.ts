/**
 * The split by recipe length: the in-process engine (execution log on) with 1-, 5- and 20-step
 * linear recipes, JOBS at once. The slope between the two longer recipes is what one more step
 * costs; the 1-step recipe less that step is what a job costs however long its recipe.
 */
import { Effect } from "effect"
import { cell, fmt, median } from "./ComparisonTable.js"
import { runEngineLoad } from "./EngineRound.js"
import type { SystemRound } from "./Figures.js"
import type { ServerProbe } from "./ServerProbe.js"
import type { WindowFigures } from "./Window.js"

/** Recipe lengths, shortest first: the first gives the per-job cost, the last two the slope. */
const LENGTHS = [1, 5, 20] as const
/** BENCH_SPLIT=0 skips the split. */
export const SPLIT = process.env["BENCH_SPLIT"] !== "0"

/** The throughput windows of each recipe length, one per round. */
export type SplitRuns = ReadonlyMap<number, ReadonlyArray<WindowFigures>>

export const runEngineSplit = async (url: string, probe: ServerProbe, rounds: number): Promise<SplitRuns> => {
  const runs = new Map<number, Array<WindowFigures>>(LENGTHS.map((steps) => [steps, []]))
  for (let r = 0; r < rounds; r++) {
    // Each round starts with another length, so no length always runs first (after BullMQ's rounds).
    for (let i = 0; i < LENGTHS.length; i++) {
      const steps = LENGTHS[(i + r) % LENGTHS.length]!
      runs.get(steps)!.push(await Effect.runPromise(runEngineLoad(url, probe, steps)))
    }
  }
  return runs
}

interface Column {
  readonly label: string
  readonly value: (window: WindowFigures, jobs: number, steps: number) => number
  readonly digits: number
}

const columns: ReadonlyArray<Column> = [
  { label: "jobs/s", value: (w, jobs) => jobs / w.seconds, digits: 0 },
  { label: "steps/s", value: (w, jobs, steps) => (jobs * steps) / w.seconds, digits: 0 },
  { label: "Node CPU µs/job", value: (w, jobs) => w.nodeCpuMicros / jobs, digits: 0 },
  { label: "Node CPU µs/step", value: (w, jobs, steps) => w.nodeCpuMicros / (jobs * steps), digits: 0 },
  { label: "server CPU µs/job", value: (w, jobs) => w.server.cpuMicros / jobs, digits: 0 },
  { label: "commands sent/job", value: (w, jobs) => w.sent / jobs, digits: 2 }
]

/** Per-job costs that the derived lines split; `bullmq` reads the same cost per BullMQ step. */
const costs = [
  { label: "Node CPU", unit: " µs", digits: 0, perJob: (w: WindowFigures) => w.nodeCpuMicros, bullmq: (r: SystemRound) => r.nodeCpuMicrosPerStep },
  { label: "server CPU", unit: " µs", digits: 0, perJob: (w: WindowFigures) => w.server.cpuMicros, bullmq: (r: SystemRound) => r.serverCpuMicrosPerStep },
  { label: "commands sent", unit: "", digits: 2, perJob: (w: WindowFigures) => w.sent, bullmq: (r: SystemRound) => r.sentPerStep }
] as const

/** The table: one row per recipe length, the cells padded to the widest of their column. */
const printRows = (runs: SplitRuns, jobs: number): void => {
  const header = ["recipe", ...columns.map((c) => c.label)]
  const body = LENGTHS.map((steps) => [
    `${steps} step${steps > 1 ? "s" : ""}`,
    ...columns.map((c) => cell(runs.get(steps)!.map((w) => c.value(w, jobs, steps)), c.digits))
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)))
  const line = (row: ReadonlyArray<string>) =>
    `  ${row.map((text, i) => (i === 0 ? text.padEnd(widths[i]!) : text.padStart(widths[i]!))).join("  ")}`
  console.log(line(header))
  for (const row of body) console.log(line(row))
}

/** Prints the split and its derived lines, the ratios to BullMQ's step from the main rounds. */
export const printEngineSplit = (runs: SplitRuns, bullmq: ReadonlyArray<SystemRound>, jobs: number): void => {
  const [one, short, long] = LENGTHS
  console.log(
    `\n  split by recipe length: the engine in this process, execution log on, ${jobs} jobs at once ` +
      `(median of ${runs.get(one)!.length} round${runs.get(one)!.length > 1 ? "s" : ""}, range in brackets)`
  )
  printRows(runs, jobs)
  const perJob = (steps: number, of: (w: WindowFigures) => number) => median(runs.get(steps)!.map((w) => of(w) / jobs))
  const marginal = costs.map((c) => (perJob(long, c.perJob) - perJob(short, c.perJob)) / (long - short))
  const fixed = costs.map((c, i) => perJob(one, c.perJob) - one * marginal[i]!)
  const derived = (values: ReadonlyArray<number>) =>
    costs
      .map((c, i) => `${c.label} ${fmt(values[i]!, c.digits)}${c.unit} (${fmt(values[i]! / median(bullmq.map(c.bullmq)), 2)}×)`)
      .join(", ")
  console.log(`  marginal step ((${long}-step − ${short}-step) ÷ ${long - short}): ${derived(marginal)}`)
  console.log(`  per job (1-step − 1 marginal step): ${derived(fixed)}`)
  console.log(`  (×: to one BullMQ step of the main table: its Node CPU, server CPU, commands sent per step)`)
}
