import { STEPS, type SystemRound } from "./Figures.js"

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Within 10 % of the engine without the log (the log is off the critical path). */
const TOLERANCE = 0.1

/**
 * The execution log's cost: the engine with the log on (the default) against the same engine with
 * it off, medians over the same rounds. Throughput may fall, latency may rise, each by 10 % at most.
 */
export const printExecutionLogCost = (on: ReadonlyArray<SystemRound>, off: ReadonlyArray<SystemRound>, jobs: number): void => {
  const rows: ReadonlyArray<{ label: string; value: (r: SystemRound) => number; digits: number; higherIsBetter: boolean }> = [
    { label: "jobs/s", value: (r) => r.stepsPerSecond / STEPS, digits: 0, higherIsBetter: true },
    { label: "event→dispatch p99, 1 job (ms)", value: (r) => r.single.p99, digits: 2, higherIsBetter: false },
    { label: `event→dispatch p99, ${jobs} at once (ms)`, value: (r) => r.loaded.p99, digits: 1, higherIsBetter: false },
    { label: "commands/step run by the server", value: (r) => r.executedPerStep, digits: 1, higherIsBetter: false },
    { label: "Node CPU µs/step", value: (r) => r.nodeCpuMicrosPerStep, digits: 0, higherIsBetter: false }
  ]
  console.log(`\n  execution log on vs off (same rounds, medians)`)
  console.log(`  ${"".padEnd(40)} ${"log on".padStart(10)} ${"log off".padStart(10)} ${"ratio".padStart(8)}  goal`)
  for (const row of rows) {
    const a = median(on.map(row.value))
    const b = median(off.map(row.value))
    const ratio = a / b
    const goal =
      row.label === "jobs/s" || row.label.startsWith("event→dispatch p99")
        ? `within 10 % ${(row.higherIsBetter ? ratio >= 1 - TOLERANCE : ratio <= 1 + TOLERANCE) ? "ok" : "MISSED"}`
        : ""
    console.log(`  ${row.label.padEnd(40)} ${a.toFixed(row.digits).padStart(10)} ${b.toFixed(row.digits).padStart(10)} ${`${ratio.toFixed(2)}×`.padStart(8)}  ${goal}`)
  }
}
