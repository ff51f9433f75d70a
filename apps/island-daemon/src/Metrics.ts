import { Effect, Either, Runtime } from "effect"
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client"
import { decodeJobOrderRecord, normalizedName } from "@microdcs/job-state"
import { JobOrderDao, ScopeRegistry, Valkey } from "@microdcs/store"

/** Job orders read per scope per scrape at most: metrics must stay cheap on a large island. */
const JOBS_PER_SCOPE = 10_000

/**
 * The daemon's Prometheus metrics (island.md §4): messages by kind, type and outcome, handler
 * latency, and, read from Valkey on each scrape, stream length, lag and pending entries per
 * scope, dead letters and job orders by state.
 *
 * Made before the island connects, so `/metrics` answers (process metrics only) while the
 * store is still away; `followStore` adds the Valkey-side figures once it is up.
 */
export const makeMetrics = () => {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: "microdcs_process_" })

  const messages = new Counter({
    name: "microdcs_messages_total",
    help: "MQTT messages handled, by kind (jobcontrol, station), CloudEvent type and outcome (ok, retry, failed)",
    labelNames: ["kind", "type", "outcome"] as const,
    registers: [registry]
  })
  const handlerSeconds = new Histogram({
    name: "microdcs_handler_seconds",
    help: "Time from receiving an MQTT message to its outcome, by kind and CloudEvent type",
    labelNames: ["kind", "type"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry]
  })

  const streamGauges = {
    length: new Gauge({ name: "microdcs_stream_length", help: "Entries in a stream", labelNames: ["stream", "scope"] as const, registers: [registry] }),
    lag: new Gauge({ name: "microdcs_stream_lag", help: "Entries a consumer group has not read yet", labelNames: ["stream", "scope", "group"] as const, registers: [registry] }),
    pending: new Gauge({ name: "microdcs_stream_pending", help: "Entries read but not acknowledged", labelNames: ["stream", "scope", "group"] as const, registers: [registry] }),
    deadLetters: new Gauge({ name: "microdcs_dead_letters", help: "Entries in a dead-letter stream", labelNames: ["kind", "scope"] as const, registers: [registry] })
  }
  const jobs = new Gauge({ name: "microdcs_jobs", help: "Listed job orders by state", labelNames: ["scope", "state"] as const, registers: [registry] })

  /** Reads the Valkey-side figures just before a scrape. */
  const refresh = Effect.gen(function* () {
    const valkey = yield* Valkey
    const scopes = yield* ScopeRegistry
    const jobOrders = yield* JobOrderDao
    const lengths: Array<[{ stream: string; scope: string }, number]> = []
    const groups: Array<[{ stream: string; scope: string; group: string }, number | undefined, number]> = []
    const dead: Array<[{ kind: string; scope: string }, number]> = []
    const counts: Array<[{ scope: string; state: string }, number]> = []
    for (const scope of yield* scopes.list) {
      for (const [stream, family] of [["changes", "changes"], ["sfc", "sfcWork"]] as const) {
        const key = yield* valkey.key(family, { scope })
        const info = yield* valkey.command("stream info", async (c) => {
          const length = await c.xlen(key)
          const found = length > 0 || (await c.exists(key)) ? ((await c.xinfo("GROUPS", key).catch(() => [])) as Array<Array<unknown>>) : []
          return { length, groups: found }
        })
        lengths.push([{ stream, scope }, info.length])
        for (const group of info.groups) {
          const fields = new Map<string, unknown>()
          for (let i = 0; i + 1 < group.length; i += 2) fields.set(String(group[i]), group[i + 1])
          const lag = fields.get("lag")
          groups.push([
            { stream, scope, group: String(fields.get("name")) },
            lag === null || lag === undefined ? undefined : Number(lag),
            Number(fields.get("pending") ?? 0)
          ])
        }
        const dlq = yield* valkey.key("deadLetterStream", { kind: stream, scope })
        dead.push([{ kind: stream, scope }, yield* valkey.command("dlq length", (c) => c.xlen(dlq))])
      }
      const page = yield* jobOrders.list(scope, { count: JOBS_PER_SCOPE })
      const byState = new Map<string, number>()
      for (const { id } of page.items) {
        const doc = yield* Effect.either(jobOrders.get(id))
        if (Either.isLeft(doc)) continue
        const decoded = decodeJobOrderRecord(doc.right.doc)
        const state = Either.isRight(decoded) ? normalizedName(decoded.right.state) : "malformed"
        byState.set(state, (byState.get(state) ?? 0) + 1)
      }
      for (const [state, count] of byState) counts.push([{ scope, state }, count])
    }
    // Reset only once everything was read: a failed read keeps the last figures instead of
    // leaving the gauges half empty.
    for (const gauge of [...Object.values(streamGauges), jobs]) gauge.reset()
    for (const [labels, value] of lengths) streamGauges.length.set(labels, value)
    for (const [labels, lag, pending] of groups) {
      streamGauges.pending.set(labels, pending)
      if (lag !== undefined) streamGauges.lag.set(labels, lag)
    }
    for (const [labels, value] of dead) streamGauges.deadLetters.set(labels, value)
    for (const [labels, value] of counts) jobs.set(labels, value)
  })

  let readStore: (() => Promise<void>) | undefined

  return {
    registry,
    /** Records one outcome of a handled message. */
    recordMessage: (kind: string, type: string, outcome: string, seconds: number) => {
      messages.inc({ kind, type, outcome })
      handlerSeconds.observe({ kind, type }, seconds)
    },
    /** From now until the scope closes, each scrape reads the Valkey-side figures first. */
    followStore: Effect.gen(function* () {
      const runtime = yield* Effect.runtime<Valkey | ScopeRegistry | JobOrderDao>()
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          readStore = () => Runtime.runPromise(runtime)(refresh.pipe(Effect.timeout("5 seconds")))
        }),
        () => Effect.sync(() => void (readStore = undefined))
      )
    }),
    /** The exposition text. */
    scrape: async (): Promise<string> => {
      if (readStore) await readStore().catch(() => undefined)
      return registry.metrics()
    },
    contentType: registry.contentType
  }
}

export type Metrics = ReturnType<typeof makeMetrics>
