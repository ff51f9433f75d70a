import { Effect } from "effect"
import { JobStates } from "@microdcs/job-state"
import { LeaseOverview, ScopeFiguresReader, ScopeRegistry } from "@microdcs/store"
import { engineConsumers, scopeActivity } from "./ConsoleActivity.js"
import { executionLogFigures } from "./ConsoleExecutionLog.js"
import type { Metrics } from "./Metrics.js"
import type { ReadinessReport } from "./Readiness.js"

const STATES = Object.keys(JobStates)

/** A metric of the registry as prom-client's JSON gives it. */
interface MetricJson {
  readonly name: string
  readonly values: ReadonlyArray<{ readonly value: number; readonly labels: Readonly<Record<string, string | number>>; readonly metricName?: string }>
}

/**
 * The messages this daemon handled since it started, by kind and outcome, and their mean
 * handling time: the daemon's own counters (`/metrics`), summed over message types.
 */
const messageFigures = async (metrics: Metrics) => {
  const json = (await metrics.registry.getMetricsAsJSON()) as unknown as ReadonlyArray<MetricJson>
  const counts: Record<string, Record<string, number>> = {}
  for (const v of json.find((m) => m.name === "microdcs_messages_total")?.values ?? []) {
    const kind = String(v.labels["kind"])
    const outcome = String(v.labels["outcome"])
    counts[kind] = { ...counts[kind], [outcome]: (counts[kind]?.[outcome] ?? 0) + v.value }
  }
  const latency: Record<string, { count: number; sum: number }> = {}
  for (const v of json.find((m) => m.name === "microdcs_handler_seconds")?.values ?? []) {
    const kind = String(v.labels["kind"])
    const entry = (latency[kind] ??= { count: 0, sum: 0 })
    if (v.metricName === "microdcs_handler_seconds_count") entry.count += v.value
    if (v.metricName === "microdcs_handler_seconds_sum") entry.sum += v.value
  }
  const meanMs = Object.fromEntries(Object.entries(latency).map(([kind, l]) => [kind, l.count === 0 ? null : (l.sum / l.count) * 1000]))
  return { counts, meanMs }
}

/**
 * The island page: readiness of each check, every scope's figures (job orders,
 * running executions, responses by state, stream lengths, pending and dead letters: sizes only,
 * no document read), each scope's last minutes (jobs started and completed per minute, run
 * times) and the engine instances seen on its work stream, the leases with their holders,
 * this daemon's message figures and its execution log writer (writes dropped, queue, batches).
 */
export const islandView = (readiness: Effect.Effect<ReadinessReport>, metrics: Metrics) =>
  Effect.gen(function* () {
    const report = yield* readiness
    const scopes = yield* Effect.flatMap(ScopeRegistry, (r) => r.list)
    const figures = yield* Effect.flatMap(ScopeFiguresReader, (reader) => reader.figures([...scopes].sort(), STATES))
    const leases = yield* Effect.flatMap(LeaseOverview, (l) => l.list)
    const messages = yield* Effect.promise(() => messageFigures(metrics))
    const now = Date.now()
    const activity = yield* Effect.forEach(figures, (f) =>
      Effect.all({ scope: Effect.succeed(f.scope), activity: scopeActivity(f.scope, now), engines: engineConsumers(f.scope) })
    )
    const executionLog = yield* executionLogFigures
    return { readiness: { ready: Object.values(report.checks).every(Boolean), ...report }, scopes: figures, activity, leases, messages, executionLog }
  })
