import { Effect, Metric } from "effect"
import { Counter, Gauge, type Registry } from "prom-client"

/**
 * An Effect metric of a package (the poller, the publisher, the store, the execution log) shown on
 * `/metrics` under its own name: the packages count with Effect's process-wide metrics, the daemon
 * exports prom-client's. prom-client needs the labels up front; attributes beyond them are summed over
 * (a counter) or the last one read wins (a gauge).
 */
export interface BridgedMetric {
  readonly name: string
  readonly help: string
  readonly labelNames: ReadonlyArray<string>
  readonly type: "counter" | "gauge"
}

/** The labels of one Effect metric's attributes, or undefined when it lacks one the bridge needs. */
const labelsOf = (attributes: Metric.Metric.AttributeSet | undefined, labelNames: ReadonlyArray<string>) => {
  const byKey = new Map(Object.entries(attributes ?? {}))
  if (!labelNames.every((l) => byKey.has(l))) return undefined
  return Object.fromEntries(labelNames.map((l) => [l, byKey.get(l)!]))
}

/** Every current value of the Effect metric `name`, with its labels. */
const readings = (spec: BridgedMetric): ReadonlyArray<{ readonly labels: Record<string, string>; readonly value: number }> =>
  Effect.runSync(Metric.snapshot).flatMap((snapshot) => {
    if (snapshot.id !== spec.name) return []
    const value = snapshot.type === "Counter" ? Number(snapshot.state.count) : snapshot.type === "Gauge" ? Number(snapshot.state.value) : undefined
    const labels = labelsOf(snapshot.attributes, spec.labelNames)
    return value === undefined || labels === undefined ? [] : [{ labels, value }]
  })

/** Registers each metric on the daemon's registry; its values are read at every scrape. */
export const bridgeEffectMetrics = (registry: Registry, specs: ReadonlyArray<BridgedMetric>): void => {
  for (const spec of specs) {
    const common = { name: spec.name, help: spec.help, labelNames: spec.labelNames, registers: [registry] }
    if (spec.type === "counter") {
      new Counter({
        ...common,
        collect() {
          this.reset()
          for (const { labels, value } of readings(spec)) this.inc(labels, value)
        }
      })
    } else {
      new Gauge({
        ...common,
        collect() {
          this.reset()
          for (const { labels, value } of readings(spec)) this.set(labels, value)
        }
      })
    }
  }
}
