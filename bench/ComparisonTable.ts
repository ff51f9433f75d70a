import type { SystemRound } from "./Figures.js"

interface Row {
  readonly label: string
  readonly value: (round: SystemRound) => number
  readonly digits: number
  /** The issue's goal for the engine, given both medians. */
  readonly goal?: { readonly text: string; readonly met: (engine: number, bullmq: number) => boolean }
}

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export const fmt = (n: number, digits: number) =>
  Number.isFinite(n) ? n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }) : "n/a"

/** The median of the rounds, with their range when there is more than one. */
export const cell = (values: ReadonlyArray<number>, digits: number) =>
  values.length > 1 ? `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)})` : fmt(values[0]!, digits)

const rows = (limit: number): ReadonlyArray<Row> => [
  { label: "steps/s", value: (r) => r.stepsPerSecond, digits: 0, goal: { text: "≥ 2× BullMQ", met: (e, b) => e >= 2 * b } },
  { label: "event→dispatch p50, 1 job (ms)", value: (r) => r.single.median, digits: 2, goal: { text: "≤ BullMQ", met: (e, b) => e <= b } },
  { label: "event→dispatch p99, 1 job (ms)", value: (r) => r.single.p99, digits: 2 },
  { label: "event→dispatch p50, jobs at once (ms)", value: (r) => r.loaded.median, digits: 1 },
  { label: "event→dispatch p99, jobs at once (ms)", value: (r) => r.loaded.p99, digits: 1, goal: { text: "≤ 10 ms", met: (e) => e <= 10 } },
  { label: "commands/step sent", value: (r) => r.sentPerStep, digits: 2, goal: { text: "≤ BullMQ", met: (e, b) => e <= b } },
  { label: "commands/step run by the server", value: (r) => r.executedPerStep, digits: 1 },
  { label: "server CPU µs/step", value: (r) => r.serverCpuMicrosPerStep, digits: 0, goal: { text: "≤ BullMQ", met: (e, b) => e <= b } },
  { label: "Node CPU µs/step", value: (r) => r.nodeCpuMicrosPerStep, digits: 0, goal: { text: "≤ BullMQ", met: (e, b) => e <= b } },
  { label: "share of the state-write limit (%)", value: (r) => (100 * r.stepsPerSecond) / limit, digits: 1 }
]

/** Calls per step by command, averaged over the rounds, the top `n`. */
const topCommands = (rounds: ReadonlyArray<SystemRound>, n: number, of: (round: SystemRound) => SystemRound["byCommand"]) => {
  const totals = new Map<string, number>()
  for (const round of rounds) for (const [name, perStep] of of(round)) totals.set(name, (totals.get(name) ?? 0) + perStep / rounds.length)
  return [...totals].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, perStep]) => `${name} ${perStep.toFixed(2)}`).join(", ")
}

/** The side-by-side table: SFC engine | BullMQ | ratio | goal, medians over the rounds. */
export const printComparison = (engine: ReadonlyArray<SystemRound>, bullmq: ReadonlyArray<SystemRound>, limit: number, jobs: number): void => {
  const w = [40, 24, 24, 9]
  console.log(`  ${"".padEnd(w[0]!)} ${"SFC engine".padStart(w[1]!)} ${"BullMQ".padStart(w[2]!)} ${"ratio".padStart(w[3]!)}  goal`)
  for (const row of rows(limit)) {
    const e = engine.map(row.value)
    const b = bullmq.map(row.value)
    const ratio = median(e) / median(b)
    const goal = row.goal ? `${row.goal.text} ${row.goal.met(median(e), median(b)) ? "ok" : "MISSED"}` : ""
    const label = row.label.replace("jobs at once", `${jobs} at once`)
    console.log(`  ${label.padEnd(w[0]!)} ${cell(e, row.digits).padStart(w[1]!)} ${cell(b, row.digits).padStart(w[2]!)} ${`${fmt(ratio, 2)}×`.padStart(w[3]!)}  ${goal}`)
  }
  console.log(`  state-write limit (SFC CAS script pipelined from raw iovalkey): ${fmt(limit, 0)} writes/s`)
  console.log(`  sent/step, engine: ${topCommands(engine, 8, (r) => r.sentByCommand)}`)
  console.log(`  sent/step, BullMQ: ${topCommands(bullmq, 8, (r) => r.sentByCommand)}`)
  console.log(`  run by the server/step, engine: ${topCommands(engine, 8, (r) => r.byCommand)}`)
  console.log(`  run by the server/step, BullMQ: ${topCommands(bullmq, 8, (r) => r.byCommand)}`)
}
