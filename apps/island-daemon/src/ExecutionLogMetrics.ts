import type { Registry } from "prom-client"
import { type BridgedMetric, bridgeEffectMetrics } from "./EffectMetrics.js"

/**
 * The execution log's counters and the engine loop's back-pressure counter are Effect metrics
 * (they live in packages, not in the daemon); `/metrics` shows them under the same names, with
 * their labels.
 */
const bridged: ReadonlyArray<BridgedMetric> = [
  { type: "counter", name: "microdcs_execution_log_refused_total", help: "Execution log commit requests refused (a key outside this island's log, or no readable key list), by reason: nothing of them written", labelNames: ["reason"] },
  { type: "counter", name: "microdcs_execution_log_committed_total", help: "Execution log values copied into storage (a key committed twice counts twice)", labelNames: [] },
  { type: "counter", name: "microdcs_execution_log_missing_total", help: "Execution log keys committed but gone from Valkey when read (retention came first)", labelNames: [] },
  { type: "counter", name: "microdcs_execution_log_database_restarts_total", help: "Embedded PostgreSQL (no PG_URL) restarts after its thread ended (an uncaught error, out of memory, an exit); its data is gone with memory://", labelNames: [] },
  { type: "counter", name: "microdcs_engine_inbox_full_total", help: "Engine inputs offered while the engine's inbox was full (back-pressure: the sources are held back by their own bounds)", labelNames: [] },
  { type: "counter", name: "microdcs_execution_log_dropped_total", help: "Execution log writes the SFC engine dropped instead of waiting (queue full, Valkey slow or down)", labelNames: [] }
]

/** Registers the bridged counters on the daemon's registry. */
export const exportExecutionLogCounters = (registry: Registry) => bridgeEffectMetrics(registry, bridged)
