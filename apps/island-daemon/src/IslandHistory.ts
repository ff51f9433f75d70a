import { Effect } from "effect"
import type { DaemonConfig } from "./DaemonConfig.js"
import { daemonHistory } from "./HistorySource.js"
import { makeJobHistory } from "./JobHistory.js"
import { followHistory } from "./JobHistoryFollower.js"
import type { Metrics } from "./Metrics.js"
import { prometheusHistory } from "./PrometheusHistory.js"

/**
 * The job history of one daemon, made at start and kept across the island's reconnections (its
 * follower's cursors with it, so a follower started again counts on where the last one stopped).
 * `follow` runs the follower in the current scope and gives the console's history source: the
 * Prometheus server when one is configured, else the daemon's own series. The follower runs
 * either way: it feeds the job metrics Prometheus scrapes.
 */
export const islandHistory = (config: DaemonConfig, metrics: Metrics) => {
  const history = makeJobHistory()
  // Entries written before the daemon started are history, not news: the counters skip them.
  const since = Date.now()
  const follow = Effect.gen(function* () {
    yield* Effect.forkScoped(followHistory(history, (scope, entry, event) => (entry.ts >= since ? metrics.recordJob(scope, event) : undefined)))
    const { prometheusUrl, prometheusMatchers } = config.history
    return prometheusUrl === undefined ? daemonHistory(history) : prometheusHistory(prometheusUrl, prometheusMatchers)
  })
  return { history, follow }
}
