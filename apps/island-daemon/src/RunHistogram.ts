/**
 * The run-time buckets of a job (Run to Complete), shared by the daemon's history and by the
 * `microdcs_job_run_seconds` histogram on `/metrics`, so the console's percentiles and Grafana's
 * `histogram_quantile` agree. The upper bounds in ms; a last bucket holds the longer runs.
 */
export const RUN_BUCKETS_MS: ReadonlyArray<number> = [100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000, 7_200_000]

/** The index of the bucket that holds `ms` (`RUN_BUCKETS_MS.length` for longer runs). */
export const runBucket = (ms: number): number => {
  const i = RUN_BUCKETS_MS.findIndex((bound) => ms <= bound)
  return i < 0 ? RUN_BUCKETS_MS.length : i
}

/**
 * The `q` quantile (0 to 1) of counts per bucket, in ms, as Prometheus's `histogram_quantile`
 * estimates it: linear within the bucket that holds the rank (from 0 for the first), the last
 * finite bound for a rank in the overflow bucket; `null` without any count.
 */
export const quantileOf = (counts: ArrayLike<number>, q: number): number | null => {
  let total = 0
  for (let i = 0; i < counts.length; i++) total += counts[i]!
  if (total === 0) return null
  const rank = q * total
  let below = 0
  for (let i = 0; i < counts.length; i++) {
    const count = counts[i]!
    if (below + count >= rank && count > 0) {
      if (i >= RUN_BUCKETS_MS.length) return RUN_BUCKETS_MS[RUN_BUCKETS_MS.length - 1]!
      const lower = i === 0 ? 0 : RUN_BUCKETS_MS[i - 1]!
      const upper = RUN_BUCKETS_MS[i]!
      return Math.round(lower + ((upper - lower) * (rank - below)) / count)
    }
    below += count
  }
  return RUN_BUCKETS_MS[RUN_BUCKETS_MS.length - 1]!
}
