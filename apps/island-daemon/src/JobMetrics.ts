import { Counter, Histogram, type Registry } from "prom-client"
import type { JobEvent } from "./JobHistory.js"
import { MAX_SCOPES } from "./JobHistory.js"
import { boundedLabel } from "./MetricLabels.js"
import { RUN_BUCKETS_MS } from "./RunHistogram.js"

/**
 * Jobs started, completed and aborted per scope and their run time, as this daemon's history
 * follower reads them from the change streams after the daemon started (the backfill of older
 * entries is not counted, so a restart shows no burst). Every daemon of an island reads the same
 * streams: a dashboard takes the `max` over instances, not the sum. The scope label is bounded
 * like the history (the first 64 scopes; later ones are `other`).
 */
export const jobMetrics = (registry: Registry) => {
  const jobs = new Counter({
    name: "microdcs_jobs_total",
    help: "Jobs of the island by scope and event (started: Run, completed: Complete, aborted: Abort), read from the change streams since this daemon started",
    labelNames: ["scope", "event"] as const,
    registers: [registry]
  })
  const runSeconds = new Histogram({
    name: "microdcs_job_run_seconds",
    help: "Run time of completed jobs (Run to Complete) by scope, read from the change streams since this daemon started",
    labelNames: ["scope"] as const,
    buckets: RUN_BUCKETS_MS.map((ms) => ms / 1000),
    registers: [registry]
  })
  const scopeLabel = boundedLabel({ cap: MAX_SCOPES })
  return (scope: string, event: JobEvent) => {
    const label = scopeLabel(scope)
    jobs.inc({ scope: label, event: event.event })
    if (event.event === "completed" && event.runMs !== undefined) runSeconds.observe({ scope: label }, event.runMs / 1000)
  }
}
