import { Layer } from "effect"
import { Counter } from "prom-client"
import { jobControlLayer, TriggerCatalog, TriggerEditRelay, TriggerStarts } from "@microdcs/job-control"
import { MqttTriggerAnnouncer, TriggerChangesListener, TriggerIngress } from "@microdcs/island-mqtt"
import type { DaemonConfig } from "./DaemonConfig.js"
import type { Metrics } from "./Metrics.js"

const topicsOf = (config: DaemonConfig) => ({ prefix: config.mqtt.topicPrefix, discriminator: config.mqtt.discriminator, wildcardLevels: config.mqtt.wildcardLevels })

/** `microdcs_triggers_total{outcome, kind}` and `microdcs_trigger_announcements_dropped_total{reason}`, once per registry. */
const triggerCounters = (metrics: Metrics) => {
  const existing = metrics.registry.getSingleMetric("microdcs_triggers_total")
  const outcomes =
    (existing as Counter<"outcome" | "kind"> | undefined) ??
    new Counter({
      name: "microdcs_triggers_total",
      help: "Trigger firings, by outcome (started; duplicate: the event's job order existed; refused: the acceptance checks said no) and the refusal's kind",
      labelNames: ["outcome", "kind"] as const,
      registers: [metrics.registry]
    })
  const dropped =
    (metrics.registry.getSingleMetric("microdcs_trigger_announcements_dropped_total") as Counter<"reason"> | undefined) ??
    new Counter({
      name: "microdcs_trigger_announcements_dropped_total",
      help: "dag.triggers.changed announcements not sent (broker down or slow); the nudge and the refresh still carry the edit",
      labelNames: ["reason"] as const,
      registers: [metrics.registry]
    })
  return { outcomes, dropped }
}

/**
 * Announces trigger edits made through this daemon (the config event) as `dag.triggers.changed`
 * on MQTT, best effort. Provided to every role, so the job control processor takes it.
 */
export const triggerAnnouncer = (config: DaemonConfig, metrics: Metrics) =>
  MqttTriggerAnnouncer({
    topics: topicsOf(config),
    source: config.source,
    onDropped: (reason) => triggerCounters(metrics).dropped.inc({ reason })
  })

/**
 * Every daemon relays the trigger edits nobody announced (the admin CLI's: it has no MQTT
 * connection), so each edit is announced once as `dag.triggers.changed`, wherever it was made:
 * the daemons that hear its nudge claim it in Valkey, and the one that gets the claim announces it.
 */
export const triggerEditRelay = (config: DaemonConfig) => TriggerEditRelay({ connectionName: `trigger-relay-${config.instanceId}` })

/**
 * The triggers of the job control role: every trigger in memory (loaded at
 * start, reloaded on `nudge:triggers`, on `dag.triggers.changed` and every
 * TRIGGER_REFRESH_INTERVAL_MS), and the ingress that starts a job order for each event on the
 * island's events topics that fires one, through a job control processor of its own (the same
 * acceptance checks and settings as the MES's requests).
 */
export const triggersRole = (config: DaemonConfig, metrics: Metrics) => {
  if (!config.roles.has("job-control")) return Layer.empty
  const topics = topicsOf(config)
  const { outcomes } = triggerCounters(metrics)
  return Layer.mergeAll(
    TriggerIngress({
      topics,
      source: config.source,
      eventLevels: config.triggers.eventLevels,
      shutdownGraceMs: config.shutdownGraceMs,
      onTriggerOutcome: (_trigger, outcome, kind) => outcomes.inc({ outcome, kind: kind ?? "" })
    }),
    TriggerChangesListener({ topics })
  ).pipe(
    Layer.provide(TriggerStarts.Default),
    Layer.provideMerge(TriggerCatalog.layer({ refreshIntervalMs: config.triggers.refreshIntervalMs, connectionName: `triggers-${config.instanceId}` })),
    Layer.provide(jobControlLayer({ defaultAcceptanceLimit: config.defaultAcceptanceLimit, retentionMs: config.retentionMs, recipeDigests: config.recipeDigests }))
  )
}
