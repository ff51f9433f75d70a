import { Deferred, Effect, Fiber, Schedule } from "effect"
import {
  type InvalidTopic,
  makeMqttConnection,
  type MqttConnectError,
  type MqttOptions,
  type MqttSubscribeError,
  type TopicConfig
} from "@microdcs/cloudevents-mqtt"
import { MethodEventTypes } from "@microdcs/job-state"
import { ConfigRefused } from "./Errors.js"
import { isEndState, followJobStates, type JobStateSeen } from "./JobStates.js"
import type { ConfigRequest, JobOrderInput, MesInput } from "./MesInput.js"
import { type JobOutcome, latencyOf, type MesReport } from "./MesReport.js"
import { makeRequester, refusalOf, type Requester } from "./MesRequests.js"

export interface MesOptions {
  /** The broker; the MES has a connection of its own (client id `island-sim-mes-…` unless set). */
  readonly mqtt: MqttOptions
  /** Prefix and discriminator: the island's. Requests go to `P/{scope}[/D]/commands`. */
  readonly topics: TopicConfig
  readonly scope: string
  readonly input: MesInput
  /** Its CloudEvent `source` (default `urn:microdcs:island-sim:mes`). */
  readonly source?: string | undefined
  /** StoreAndStart requests in flight at once (default 8). */
  readonly concurrency?: number | undefined
  /** How long to wait for the jobs to end once the last was submitted (default 120 s). */
  readonly timeoutMs?: number | undefined
  /** How long to wait for each reply (default 10 s). */
  readonly requestTimeoutMs?: number | undefined
  /** Told the counts every `progressEveryMs` (default 1 s) while the batch runs. */
  readonly onProgress?: ((progress: MesProgress) => void) | undefined
  readonly progressEveryMs?: number | undefined
  /** Told what the MES does, a line at a time. */
  readonly log?: ((line: string) => void) | undefined
}

export interface MesProgress {
  readonly total: number
  readonly submitted: number
  readonly completed: number
  readonly failed: number
}

/** The batch as the MES follows it: when each order was sent, refused or seen to end. */
interface Batch {
  readonly ids: ReadonlySet<string>
  readonly sentAt: Map<string, number>
  readonly refused: Map<string, string>
  readonly ended: Map<string, { readonly state: string; readonly at: number }>
  readonly settledIds: Set<string>
  readonly settled: Deferred.Deferred<void>
}

const settle = (batch: Batch, id: string) => {
  batch.settledIds.add(id)
  if (batch.settledIds.size >= batch.ids.size) Deferred.doneUnsafe(batch.settled, Effect.void)
}

const noteState = (batch: Batch, seen: JobStateSeen) =>
  Effect.sync(() => {
    if (!batch.ids.has(seen.jobId) || !isEndState(seen.state) || batch.ended.has(seen.jobId)) return
    batch.ended.set(seen.jobId, { state: seen.state, at: performance.now() })
    settle(batch, seen.jobId)
  })

const configure = (requester: Requester, config: ReadonlyArray<ConfigRequest>) =>
  Effect.forEach(
    config,
    (entry) =>
      requester.request(entry.type, entry.data, entry.extensions).pipe(
        Effect.mapError((error) => new ConfigRefused({ origin: entry.origin, type: entry.type, reason: error.reason })),
        Effect.flatMap((reply) => {
          const refusal = refusalOf(reply)
          return refusal === undefined ? Effect.void : Effect.fail(new ConfigRefused({ origin: entry.origin, type: entry.type, reason: refusal }))
        })
      ),
    { discard: true }
  )

const submitOne = (requester: Requester, batch: Batch, order: JobOrderInput) =>
  Effect.sync(() => batch.sentAt.set(order.id, performance.now())).pipe(
    Effect.andThen(requester.request(MethodEventTypes.StoreAndStart, { JobOrder: order.jobOrder })),
    Effect.map(refusalOf),
    Effect.catch((error) => Effect.succeed(error.reason)),
    Effect.flatMap((refusal) =>
      Effect.sync(() => {
        if (refusal === undefined) return
        batch.refused.set(order.id, refusal)
        settle(batch, order.id)
      })
    )
  )

const countsOf = (batch: Batch): MesProgress => {
  const ends = [...batch.ended.values()]
  const completed = ends.filter((e) => e.state === "Ended_Completed").length
  const refusedOnly = [...batch.refused.keys()].filter((id) => !batch.ended.has(id)).length
  return { total: batch.ids.size, submitted: batch.sentAt.size, completed, failed: ends.length - completed + refusedOnly }
}

const outcomeOf = (batch: Batch, id: string): JobOutcome | undefined => {
  const end = batch.ended.get(id)
  if (end?.state === "Ended_Completed") return undefined
  if (end !== undefined) return { id, outcome: "failed", detail: `ended ${end.state}` }
  const refusal = batch.refused.get(id)
  if (refusal !== undefined) return { id, outcome: "refused", detail: refusal }
  return { id, outcome: "pending", detail: "no end seen before the timeout" }
}

const reportOf = (batch: Batch, scope: string, startedAt: number): MesReport => {
  const counts = countsOf(batch)
  const lastEnd = Math.max(startedAt, ...[...batch.ended.values()].map((e) => e.at))
  const elapsedSeconds = (batch.settledIds.size >= batch.ids.size ? lastEnd - startedAt : performance.now() - startedAt) / 1000
  const latencies = [...batch.ended].flatMap(([id, e]) => (e.state === "Ended_Completed" ? [e.at - (batch.sentAt.get(id) ?? e.at)] : []))
  const notCompleted = [...batch.ids].flatMap((id) => outcomeOf(batch, id) ?? [])
  return {
    scope,
    submitted: counts.submitted,
    completed: counts.completed,
    failed: counts.failed,
    pending: notCompleted.filter((o) => o.outcome === "pending").length,
    elapsedSeconds,
    throughput: elapsedSeconds > 0 ? counts.completed / elapsedSeconds : 0,
    latencyMs: latencyOf(latencies),
    notCompleted
  }
}

const newBatch = (orders: ReadonlyArray<JobOrderInput>): Batch => {
  const settled = Deferred.makeUnsafe<void>()
  if (orders.length === 0) Deferred.doneUnsafe(settled, Effect.void)
  return { ids: new Set(orders.map((o) => o.id)), sentAt: new Map(), refused: new Map(), ended: new Map(), settledIds: new Set(), settled }
}

/**
 * An MES over MQTT: sends the configuration requests one by one (the first refusal stops it,
 * before any job order), then the job orders with StoreAndStart, and follows the scope's job
 * order status events until every order has ended (or was refused) or the timeout has passed.
 * Returns the report; that jobs failed is in the report, not an error.
 */
export const runMes = (options: MesOptions): Effect.Effect<MesReport, ConfigRefused | MqttConnectError | InvalidTopic | MqttSubscribeError> =>
  Effect.gen(function* () {
    const log = options.log ?? (() => undefined)
    const mqtt = yield* makeMqttConnection({ clientIdBase: "island-sim-mes", connectTimeoutMs: 5000, ...options.mqtt })
    const batch = newBatch(options.input.orders)
    yield* followJobStates(mqtt, options.topics, [options.scope], (seen) => noteState(batch, seen))
    const source = options.source ?? "urn:microdcs:island-sim:mes"
    const requester = yield* makeRequester(mqtt, options.topics, options.scope, { source, timeoutMs: options.requestTimeoutMs ?? 10_000 })
    log(`MES: sending ${options.input.config.length} configuration requests to scope ${options.scope}`)
    yield* configure(requester, options.input.config)
    log(`MES: submitting ${batch.ids.size} job orders with StoreAndStart`)
    const startedAt = performance.now()
    const progress = yield* Effect.sync(() => options.onProgress?.(countsOf(batch))).pipe(
      Effect.repeat(Schedule.spaced(options.progressEveryMs ?? 1000)),
      Effect.delay(options.progressEveryMs ?? 1000),
      Effect.forkScoped
    )
    yield* Effect.forEach(options.input.orders, (order) => submitOne(requester, batch, order), { concurrency: options.concurrency ?? 8, discard: true })
    yield* Deferred.await(batch.settled).pipe(Effect.timeout(options.timeoutMs ?? 120_000), Effect.ignore)
    yield* Fiber.interrupt(progress)
    return reportOf(batch, options.scope, startedAt)
  }).pipe(Effect.scoped)
