/** What became of one job order of the batch that did not complete. */
export interface JobOutcome {
  readonly id: string
  /** `failed`: it ended otherwise (aborted, closed); `refused`: StoreAndStart was refused or unanswered; `pending`: no end seen in time. */
  readonly outcome: "failed" | "refused" | "pending"
  readonly detail: string
}

/** How a batch went, as `island-sim mes` prints it (text, or this as JSON with `--json`). */
export interface MesReport {
  readonly scope: string
  readonly submitted: number
  readonly completed: number
  /** Ended otherwise, or refused. */
  readonly failed: number
  /** No end seen before the timeout. */
  readonly pending: number
  /** From the first StoreAndStart sent to the last end seen (or the timeout). */
  readonly elapsedSeconds: number
  /** Completed jobs per second over `elapsedSeconds`. */
  readonly throughput: number
  /** StoreAndStart sent → Ended_Completed seen, over the completed jobs; null when none completed. */
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number } | null
  /** Every job order that did not complete, with why. */
  readonly notCompleted: ReadonlyArray<JobOutcome>
}

/** The value at fraction `p` of the sorted values (nearest rank). */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))] ?? Number.NaN

export const latencyOf = (latencies: ReadonlyArray<number>): MesReport["latencyMs"] => {
  if (latencies.length === 0) return null
  const sorted = [...latencies].sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1)! }
}

/** Whether every job order of the batch completed: the `mes` command's exit code follows it. */
export const allCompleted = (report: MesReport): boolean => report.submitted > 0 && report.completed === report.submitted

const NOT_COMPLETED_SHOWN = 20

/** The report as text, one figure a line. */
export const formatReport = (report: MesReport): string => {
  const ms = (n: number) => `${n.toFixed(0)} ms`
  const lines = [
    `scope        ${report.scope}`,
    `submitted    ${report.submitted}`,
    `completed    ${report.completed}`,
    `failed       ${report.failed}`,
    `pending      ${report.pending}`,
    `elapsed      ${report.elapsedSeconds.toFixed(2)} s`,
    `throughput   ${report.throughput.toFixed(1)} jobs/s`,
    report.latencyMs === null
      ? "latency      none completed"
      : `latency      p50 ${ms(report.latencyMs.p50)}  p99 ${ms(report.latencyMs.p99)}  max ${ms(report.latencyMs.max)} (StoreAndStart sent → Ended_Completed seen)`
  ]
  for (const job of report.notCompleted.slice(0, NOT_COMPLETED_SHOWN)) lines.push(`  ${job.id}  ${job.outcome}: ${job.detail}`)
  if (report.notCompleted.length > NOT_COMPLETED_SHOWN) lines.push(`  ... and ${report.notCompleted.length - NOT_COMPLETED_SHOWN} more`)
  return lines.join("\n")
}
