import type { Registry } from "prom-client"
import { type BridgedMetric, bridgeEffectMetrics } from "./EffectMetrics.js"

const pollerCounter = (what: string, help: string): BridgedMetric => ({
  type: "counter",
  name: `microdcs_poller_${what}_total`,
  help: `${help}, by poller kind (sfc, changes, dagcommit) and consumer group`,
  labelNames: ["kind", "group"]
})

const publisherCounter = (what: string, help: string): BridgedMetric => ({
  type: "counter",
  name: `microdcs_publisher_${what}_total`,
  help: `${help}, by publisher instance`,
  labelNames: ["instance"]
})

/**
 * What the island's stream workers count as Effect metrics in their packages: every poller (the
 * engine's work and change streams, the execution log's commits), the publisher, and the store's
 * XAUTOCLAIM. Shown on `/metrics` under the packages' own names.
 */
const bridged: ReadonlyArray<BridgedMetric> = [
  pollerCounter("read", "New stream entries read (first deliveries)"),
  pollerCounter("processed", "Stream entries handled and acknowledged"),
  pollerCounter("failed", "Failed deliveries of stream entries (each failed delivery counts once)"),
  pollerCounter("retried", "Own failed stream entries delivered again after their backoff"),
  pollerCounter("dead_lettered", "Stream entries moved to their dead-letter stream"),
  pollerCounter("claimed", "Stream entries taken over from other consumers (XAUTOCLAIM, XCLAIM)"),
  pollerCounter("claim_deleted", "Pending ids XAUTOCLAIM found deleted (trimmed or XDEL'd before acknowledgement)"),
  pollerCounter("trimmed", "Stream entries removed by trimming"),
  publisherCounter("published", "Retained messages sent (order, result and state-index topics)"),
  publisherCounter("deleted", "Zero-byte retained messages sent to delete order and result topics"),
  publisherCounter("batches", "Change batches published and acknowledged by saving the cursor"),
  publisherCounter("activations", "Times the instance took the lease and became the active publisher"),
  { type: "gauge", name: "microdcs_publisher_active", help: "1 while the instance holds the publisher lease and publishes, else 0", labelNames: ["instance"] },
  {
    type: "counter",
    name: "microdcs_stream_autoclaim_deleted_total",
    help: "Pending stream entries XAUTOCLAIM found deleted (trimmed or XDEL'd before acknowledgement), by consumer group",
    labelNames: ["group"]
  }
]

/** Registers the workers' counters on the daemon's registry. */
export const exportWorkerMetrics = (registry: Registry) => bridgeEffectMetrics(registry, bridged)
