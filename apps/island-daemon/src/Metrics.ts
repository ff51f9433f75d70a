import { Effect } from "effect"
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client"
import type { ScopeRegistry, Valkey } from "@microdcs/store"
import { exportExecutionLogCounters } from "./ExecutionLogMetrics.js"
import { exportWorkerMetrics } from "./WorkerMetrics.js"
import { jobMetrics } from "./JobMetrics.js"
import { boundedLabel, jobControlTypes } from "./MetricLabels.js"
import { readStoreFigures, type ScopeFigures } from "./StoreFigures.js"

/** Scrapes within this long of the last Valkey read get its figures again: many scrapers, one read. */
const STORE_FIGURES_TTL_MS = 5_000

/** The message kinds: the job control ingress and the station ingress. */
export type MessageKind = "jobcontrol" | "station"

/** The counters and the histogram of handled messages, dropped publishes and journal work. */
const messageMetrics = (registry: Registry) => ({
  messages: new Counter({
    name: "microdcs_messages_total",
    help: "MQTT messages handled, by kind (jobcontrol, station), CloudEvent type (known types, else other) and outcome (ok, refused, retry, failed)",
    labelNames: ["kind", "type", "outcome"] as const,
    registers: [registry]
  }),
  refused: new Counter({
    name: "microdcs_refused_total",
    help: "Requests answered with a refusal, by kind, CloudEvent type and reason (mdcserrorkind or ReturnStatus)",
    labelNames: ["kind", "type", "reason"] as const,
    registers: [registry]
  }),
  publishDropped: new Counter({
    name: "microdcs_mqtt_publish_dropped_total",
    help: "Replies and status events the broker refused or that could not be sent (invalid response topic, not encodable), dropped instead of retried",
    labelNames: ["what", "reason"] as const,
    registers: [registry]
  }),
  journal: new Counter({
    name: "microdcs_journal_total",
    help: "Journal work of this instance, by operation (record: station events journaled; sweep: entries and buckets removed; config: configuration events; reload) and outcome (inserted, duplicate, failed, removed, subtracted, ...)",
    labelNames: ["operation", "outcome"] as const,
    registers: [registry]
  }),
  handlerSeconds: new Histogram({
    name: "microdcs_handler_seconds",
    help: "Time from receiving an MQTT message to its outcome, by kind and CloudEvent type",
    labelNames: ["kind", "type"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry]
  })
})

/** The gauges of the Valkey-side figures. */
const storeGauges = (registry: Registry) => {
  const gauge = <L extends string>(name: string, help: string, labelNames: ReadonlyArray<L>) => new Gauge({ name, help, labelNames, registers: [registry] })
  return {
    length: gauge("microdcs_stream_length", "Entries in a stream (XLEN)", ["stream", "scope"]),
    lag: gauge("microdcs_stream_lag", "Entries a consumer group has not read yet", ["stream", "scope", "group"]),
    pending: gauge("microdcs_stream_pending", "Entries read but not acknowledged", ["stream", "scope", "group"]),
    deadLetters: gauge("microdcs_dead_letters", "Entries in a dead-letter stream", ["kind", "scope"]),
    jobOrders: gauge("microdcs_job_orders", "Job orders in the scope's list: stored and not yet cleared or cancelled", ["scope"]),
    activeExecutions: gauge("microdcs_executions_active", "Recipe executions not yet terminal (Running, Interrupted)", ["scope"]),
    responses: gauge("microdcs_job_responses", "Job responses by state (the job's end state: Ended_Completed, Aborted, ...)", ["scope", "state"])
  }
}

type StoreGauges = ReturnType<typeof storeGauges>

const showFigures = (gauges: StoreGauges, figures: ReadonlyArray<ScopeFigures>) => {
  for (const g of Object.values(gauges)) g.reset()
  for (const f of figures) {
    for (const [stream, length] of Object.entries(f.streamLength)) gauges.length.set({ stream, scope: f.scope }, length)
    for (const [kind, count] of Object.entries(f.deadLetters)) gauges.deadLetters.set({ kind, scope: f.scope }, count)
    for (const g of f.groups) {
      gauges.pending.set({ stream: g.stream, scope: g.scope, group: g.group }, g.pending)
      if (g.lag !== undefined) gauges.lag.set({ stream: g.stream, scope: g.scope, group: g.group }, g.lag)
    }
    gauges.jobOrders.set({ scope: f.scope }, f.jobOrders)
    gauges.activeExecutions.set({ scope: f.scope }, f.activeExecutions)
    for (const [state, count] of Object.entries(f.responsesByState)) gauges.responses.set({ scope: f.scope, state }, count)
  }
}

/** Where scrapes get the Valkey-side figures: the store's reader while it is followed, and the last read. */
interface StoreFiguresCache {
  readonly gauges: StoreGauges
  readStore: (() => Promise<ReadonlyArray<ScopeFigures>>) | undefined
  // One read at a time, its result kept for the TTL; a failed read keeps the last figures.
  last: { readonly at: number; readonly read: Promise<void> } | undefined
}

const refresh = (store: StoreFiguresCache): Promise<void> => {
  const read = store.readStore
  if (read === undefined) return Promise.resolve()
  const now = Date.now()
  if (store.last !== undefined && now - store.last.at < STORE_FIGURES_TTL_MS) return store.last.read
  const pending = read().then((figures) => showFigures(store.gauges, figures), () => undefined)
  store.last = { at: now, read: pending }
  return pending
}

/** From now until the scope closes, scrapes read the Valkey-side figures (at most once per TTL). */
const followStore = (store: StoreFiguresCache) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.context<Valkey | ScopeRegistry>()
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        store.last = undefined
        store.readStore = () => Effect.runPromiseWith(runtime)(readStoreFigures.pipe(Effect.timeout("5 seconds")))
      }),
      () => Effect.sync(() => void (store.readStore = undefined))
    )
  })

/**
 * The daemon's Prometheus metrics: messages by kind, type and outcome, refusals
 * by reason, handler latency, and, read from Valkey's index and stream sizes (never documents),
 * stream length, lag and pending entries per scope, dead letters, job orders, active executions
 * and job responses by state.
 *
 * Made before the island connects, so `/metrics` answers (process metrics only) while the
 * store is still away; `followStore` adds the Valkey-side figures once it is up.
 */
export const makeMetrics = () => {
  const registry = new Registry()
  // prom-client's default names already start with process_ and nodejs_.
  collectDefaultMetrics({ register: registry, prefix: "microdcs_" })
  // The execution log's storage counters (Effect metrics of @microdcs/execution-log), read at each scrape.
  exportExecutionLogCounters(registry)
  // The pollers', the publisher's and XAUTOCLAIM's counters (Effect metrics of their packages), likewise.
  exportWorkerMetrics(registry)
  const { messages, refused, publishDropped, journal, handlerSeconds } = messageMetrics(registry)
  // The type comes from the sender: job control knows its types; station types are the recipes'.
  const typeLabel: Record<MessageKind, (type: string) => string> = {
    jobcontrol: boundedLabel({ known: jobControlTypes, keep: ["undecodable"] }),
    station: boundedLabel({ cap: 64, keep: ["undecodable"] })
  }
  const reasonLabel = boundedLabel({ cap: 64 })
  const store: StoreFiguresCache = { gauges: storeGauges(registry), readStore: undefined, last: undefined }
  const ready = new Gauge({
    name: "microdcs_ready",
    help: "The readiness checks of /readyz at the last scrape, one per check: 1 passes, 0 fails (check started is 0 while the island starts)",
    labelNames: ["check"] as const,
    registers: [registry]
  })
  const readiness = { at: Number.NEGATIVE_INFINITY }
  const recordJob = jobMetrics(registry)
  return {
    registry,
    /** A job started, completed or aborted in a scope (the history follower's events; see JobMetrics.ts). */
    recordJob,
    /** Records one outcome of a handled message; a refusal also counts by its reason. */
    recordMessage: (kind: MessageKind, type: string, outcome: string, seconds: number, reason?: string) => {
      const label = typeLabel[kind](type)
      messages.inc({ kind, type: label, outcome })
      if (outcome === "refused") refused.inc({ kind, type: label, reason: reasonLabel(reason ?? "unknown") })
      handlerSeconds.observe({ kind, type: label }, seconds)
    },
    /** A reply or status event dropped by job control (what: reply | status event; reason: refused | invalid-topic | not-encodable). */
    recordPublishDropped: (what: string, reason: string) => publishDropped.inc({ what, reason }),
    /** Journal work: `count` events, entries or buckets of one operation's outcome (a failure counts 1). */
    recordJournal: (operation: "record" | "sweep" | "config" | "reload", outcome: string, count = 1) => journal.inc({ operation, outcome }, count),
    /** Whether the readiness checks are older than the store figures' TTL: many scrapers, one check. */
    readinessDue: () => performance.now() - readiness.at >= STORE_FIGURES_TTL_MS,
    /** The readiness checks as `/readyz` reports them, for alerting on what `/readyz` says. */
    recordReadiness: (checks: Readonly<Record<string, boolean>>) => {
      readiness.at = performance.now()
      ready.reset()
      for (const [check, passes] of Object.entries(checks)) ready.set({ check }, passes ? 1 : 0)
    },
    /** From now until the scope closes, scrapes read the Valkey-side figures (at most once per TTL). */
    followStore: followStore(store),
    /** The exposition text. */
    scrape: async (): Promise<string> => {
      await refresh(store)
      return registry.metrics()
    },
    contentType: registry.contentType
  }
}

export type Metrics = ReturnType<typeof makeMetrics>
