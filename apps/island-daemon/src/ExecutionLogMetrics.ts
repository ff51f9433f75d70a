import { Effect, Metric, MetricState } from "effect"
import { Counter, type Registry } from "prom-client"

/**
 * The execution log's counters are Effect metrics (the storage role lives in a package, not in
 * the daemon); these prom-client counters read them at each scrape, so `/metrics` shows them
 * under the same names. Listed here with their labels: prom-client needs both up front.
 */
const bridged = [
  { name: "microdcs_execution_log_refused_total", help: "Execution log commit requests refused (a key outside this island's log, or no readable key list), by reason: nothing of them written", labelNames: ["reason"] },
  { name: "microdcs_execution_log_committed_total", help: "Execution log values copied into storage (a key committed twice counts twice)", labelNames: [] },
  { name: "microdcs_execution_log_missing_total", help: "Execution log keys committed but gone from Valkey when read (retention came first)", labelNames: [] },
  { name: "microdcs_execution_log_dropped_total", help: "Execution log writes the SFC engine dropped instead of waiting (queue full, Valkey slow or down)", labelNames: [] }
] as const

/** Registers the bridged counters on the daemon's registry. */
export const exportExecutionLogCounters = (registry: Registry) => {
  for (const spec of bridged) {
    new Counter({
      name: spec.name,
      help: spec.help,
      labelNames: spec.labelNames,
      registers: [registry],
      collect() {
        this.reset()
        for (const pair of Effect.runSync(Metric.snapshot)) {
          if (pair.metricKey.name !== spec.name || !MetricState.isCounterState(pair.metricState)) continue
          const tags = new Map([...pair.metricKey.tags].map((t) => [t.key, t.value]))
          if (!spec.labelNames.every((l) => tags.has(l))) continue
          const labels = Object.fromEntries(spec.labelNames.map((l) => [l, tags.get(l)!]))
          this.inc(labels, Number(pair.metricState.count))
        }
      }
    })
  }
}
