import { Effect, Either, Runtime } from "effect"
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client"
import { decodeJobOrderRecord, normalizedName } from "@microdcs/job-state"
import { JobOrderDao, ScopeRegistry, Valkey, ValkeyStreams } from "@microdcs/store"

/** Job orders read per scope per scrape at most: metrics must stay cheap on a large island. */
const JOBS_PER_SCOPE = 10_000

/**
 * The daemon's Prometheus metrics (island.md §4): messages by type and outcome, handler latency,
 * and, read from Valkey on each scrape, stream lag and pending entries per scope, dead letters and
 * job orders by state.
 */
export const makeMetrics = Effect.gen(function* () {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: "microdcs_process_" })
  const runtime = yield* Effect.runtime<Valkey | ScopeRegistry | ValkeyStreams | JobOrderDao>()
  const run = <A, E>(effect: Effect.Effect<A, E, Valkey | ScopeRegistry | ValkeyStreams | JobOrderDao>) => Runtime.runPromise(runtime)(effect)

  const messages = new Counter({
    name: "microdcs_messages_total",
    help: "MQTT messages handled, by CloudEvent type and outcome",
    labelNames: ["type", "outcome"] as const,
    registers: [registry]
  })
  const handlerSeconds = new Histogram({
    name: "microdcs_handler_seconds",
    help: "Time from receiving a message to acknowledging it",
    labelNames: ["type"] as const,
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
    streamGauges.length.reset()
    streamGauges.lag.reset()
    streamGauges.pending.reset()
    streamGauges.deadLetters.reset()
    jobs.reset()
    for (const scope of yield* scopes.list) {
      for (const [stream, family] of [["changes", "changes"], ["sfc", "sfcWork"]] as const) {
        const key = yield* valkey.key(family, { scope })
        const info = yield* valkey.command("stream info", async (c) => {
          const length = await c.xlen(key)
          const groups = length > 0 || (await c.exists(key)) ? ((await c.xinfo("GROUPS", key).catch(() => [])) as Array<Array<unknown>>) : []
          return { length, groups }
        })
        streamGauges.length.set({ stream, scope }, info.length)
        for (const group of info.groups) {
          const fields = new Map<string, unknown>()
          for (let i = 0; i + 1 < group.length; i += 2) fields.set(String(group[i]), group[i + 1])
          const name = String(fields.get("name"))
          streamGauges.pending.set({ stream, scope, group: name }, Number(fields.get("pending") ?? 0))
          const lag = fields.get("lag")
          if (lag !== null && lag !== undefined) streamGauges.lag.set({ stream, scope, group: name }, Number(lag))
        }
        const dlq = yield* valkey.key("deadLetterStream", { kind: stream, scope })
        streamGauges.deadLetters.set({ kind: stream, scope }, yield* valkey.command("dlq length", (c) => c.xlen(dlq)))
      }
      const page = yield* jobOrders.list(scope, { count: JOBS_PER_SCOPE })
      const counts = new Map<string, number>()
      for (const { id } of page.items) {
        const doc = yield* Effect.either(jobOrders.get(id))
        if (Either.isLeft(doc)) continue
        const decoded = decodeJobOrderRecord(doc.right.doc)
        const state = Either.isRight(decoded) ? normalizedName(decoded.right.state) : "malformed"
        counts.set(state, (counts.get(state) ?? 0) + 1)
      }
      for (const [state, count] of counts) jobs.set({ scope, state }, count)
    }
  })

  return {
    registry,
    /** Records one handled message. */
    recordMessage: (type: string, outcome: string, seconds: number) => {
      messages.inc({ type, outcome })
      handlerSeconds.observe({ type }, seconds)
    },
    /** The exposition text, after reading the Valkey-side figures. */
    scrape: async (): Promise<string> => {
      await run(refresh).catch(() => undefined)
      return registry.metrics()
    },
    contentType: registry.contentType
  }
})

export type Metrics = Effect.Effect.Success<typeof makeMetrics>
