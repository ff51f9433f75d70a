import { randomUUID } from "node:crypto"
import { Context, Effect, Result, Layer, Option, Stream } from "effect"
import {
  encodeJobOrderRecord,
  JobStates,
  type JobOrder,
  type JobResponse,
  makeJobResponse,
  decodeJobOrderRecord,
  isFinished,
  isTerminal,
  normalizedName,
  priorityOf,
  retiresJob,
  transition,
  type Trigger
} from "@microdcs/job-state"
import { type CloudEvent, type IncomingMessage, makeMqttConnection, MqttConnection, type MqttOptions } from "@microdcs/cloudevents-mqtt"
import { ChangeStream, JobOrderDao, JobResponseDao, PublisherCursors } from "@microdcs/store"
import { randomPrefix, startInstance, until } from "@microdcs/test-utils"
import { putJobOrder, testStore } from "@microdcs/testkit"
import { Publisher, PublisherEventTypes, PublisherLive, type PublisherOptions, type StateIndex, type StateIndexJob } from "@microdcs/publisher"

/** Shared pieces of the publisher tests (not a test file itself). */

/** The store over the run's Valkey with the given prefix: what the test writes with and what a publisher reads. */
export const store = (valkeyPrefix: string) => testStore({ prefix: valkeyPrefix })

// Shared with the other packages' tests: repeats an effect until a check holds, failing after a deadline.
export { until } from "@microdcs/test-utils"

/** A fresh island: its own Valkey prefix and topic prefix; its topics start at `base`. */
export const freshIsland = () => {
  const topicPrefix = randomPrefix("mqtt")
  return {
    valkeyPrefix: randomPrefix("pub"),
    base: `${topicPrefix}/island-1`,
    // The index after every batch: these tests read it right after the batch that changed it.
    options: { prefix: topicPrefix, discriminator: "island-1", messageExpirySeconds: 3600, fallbackIntervalMs: 100, leaseTtlMs: 3000, stateIndexIntervalMs: 0 }
  }
}

/**
 * Starts a publisher (its own Valkey and MQTT connections) in a scope of its own, so a test can
 * stop it in the middle, as a process exit would.
 */
export const startPublisher = (brokerUrl: string, valkeyPrefix: string, options: PublisherOptions, mqtt: Partial<MqttOptions> = {}) =>
  Effect.map(
    startInstance(
      PublisherLive(options).pipe(
        Layer.provide(MqttConnection.layer({ url: brokerUrl, clientIdBase: "publisher", connectTimeoutMs: 5000, reconnectMinMs: 100, ...mqtt })),
        Layer.provide(store(valkeyPrefix))
      )
    ),
    ({ context, stop }) => ({ publisher: Context.get(context, Publisher), stop })
  )

// ---- writes, as the job-control processor and the SFC engine make them ------------------------

export const jobOrder = (id: string, priority: number, extra: Record<string, unknown> = {}): JobOrder => ({
  JobOrderID: id,
  Priority: priority,
  WorkMasterID: [{ ID: "wm-1" }],
  ...extra
})

/** Store or StoreAndStart: a create-only put with the method as the change word. */
export const admit = (scope: string, order: JobOrder, method: "Store" | "StoreAndStart" = "Store") =>
  putJobOrder(scope, order, { state: method === "Store" ? JobStates.NotAllowedToStart_Ready : JobStates.AllowedToStart_Ready, change: method })

/** A transition (or Update with `replacement`): a versioned put of the next state; Clear/Cancel retire the job. */
export const move = (id: string, trigger: Trigger, replacement?: JobOrder) =>
  Effect.gen(function* () {
    const dao = yield* JobOrderDao
    const stored = yield* dao.get(id)
    const current = Result.getOrThrow(decodeJobOrderRecord(stored.doc))
    const next = Result.getOrThrow(transition(current.state, trigger))
    const order = replacement ?? current.jobOrder
    return yield* dao.put({
      id,
      scope: stored.scope,
      doc: encodeJobOrderRecord(order, next),
      priority: priorityOf(order),
      expectedVersion: stored.version,
      change: trigger,
      ...(retiresJob(trigger) ? { retainMs: 60_000 } : {})
    })
  })

/** The job response of `orderId` as the SFC engine stores it (v2), and as `result/{id}` carries it. */
export const responseDoc = (orderId: string): JobResponse =>
  makeJobResponse({ responseId: `resp-${orderId}`, jobOrderId: orderId, startTime: 1, endTime: 2, state: JobStates.Ended_Completed, data: { yield: 42 } })

/** The same response in the form the previous release's engine stored (v1). */
export const oldResponseDoc = (orderId: string) => ({
  ID: `resp-${orderId}`,
  JobOrderID: orderId,
  StartTime: "1970-01-01T00:00:00.001Z",
  EndTime: "1970-01-01T00:00:00.002Z",
  JobState: "Ended_Completed",
  Data: { yield: 42 }
})

/** The job response the SFC engine stores when a recipe ends (create-only, id differs from the order's); `doc` another document under its id. */
export const respond = (scope: string, orderId: string, doc: unknown = responseDoc(orderId)) =>
  Effect.flatMap(JobResponseDao, (dao) =>
    dao.put({
      id: `resp-${orderId}`,
      scope,
      orderId,
      state: "Ended_Completed",
      startTime: 1,
      doc: JSON.stringify(doc),
      expectedVersion: 0,
      change: "ResultUpdate"
    })
  )

/** The publisher has saved a cursor at the newest change of the scope: everything written is published. */
export const caughtUp = (scope: string) =>
  until(
    Effect.gen(function* () {
      const latest = yield* (yield* ChangeStream).latestId(scope)
      const cursor = yield* (yield* PublisherCursors).get(scope)
      return Option.isSome(latest) && Option.isSome(cursor) && latest.value === cursor.value
    }),
    (done) => done
  )

// ---- reading what the broker retains ----------------------------------------------------------

export interface Retained {
  readonly event: CloudEvent
  readonly message: IncomingMessage
}

/**
 * The retained messages under `base` right now: a fresh connection subscribes to `base/#`, then
 * publishes a non-retained sentinel under `base`; the broker queues the retained messages at
 * SUBSCRIBE, so everything before the sentinel is the retained set.
 */
export const retainedUnder = (brokerUrl: string, base: string) =>
  Effect.gen(function* () {
    const reader = yield* makeMqttConnection({ url: brokerUrl, clientIdBase: "reader", connectTimeoutMs: 5000 })
    const messages = yield* reader.subscribe(`${base}/#`)
    const sentinel = `${base}/sentinel-${randomUUID()}`
    yield* reader.publishRaw(sentinel, Buffer.from("end"), { qos: 1 })
    const collected = yield* messages.pipe(
      Stream.tap((m) => m.ack),
      Stream.takeUntil((m) => m.topic === sentinel),
      Stream.runCollect,
      Effect.timeout("5 seconds")
    )
    const retained = new Map<string, Retained>()
    for (const message of collected) {
      if (message.topic === sentinel || !message.retain) continue
      retained.set(message.topic, { message, event: Result.getOrThrow(message.decoded) })
    }
    return retained
  }).pipe(Effect.scoped)

/** Deletes every retained message under `base`, as a broker that lost its retained store would have none. */
export const wipeRetained = (brokerUrl: string, base: string) =>
  Effect.gen(function* () {
    const topics = [...(yield* retainedUnder(brokerUrl, base)).keys()]
    const wiper = yield* makeMqttConnection({ url: brokerUrl, clientIdBase: "wiper", connectTimeoutMs: 5000 })
    for (const topic of topics) yield* wiper.publishRaw(topic, Buffer.alloc(0), { qos: 1, retain: true })
    return topics.length
  }).pipe(Effect.scoped)

/**
 * A scope's state index as retained: the head on `state-index` and its pages on
 * `state-index/{n}`, all of one `seq`, with the jobs of all pages in order.
 */
export const retainedStateIndex = (retained: ReadonlyMap<string, Retained>, base: string, scope: string) => {
  const head = retained.get(`${base}/${scope}/state-index`)
  if (head?.event.type !== PublisherEventTypes.stateIndex) throw new Error(`no state index retained for ${scope}`)
  const first = head.event.data as StateIndex
  const pages: Array<StateIndex> = [first]
  for (let n = 1; n < first.pages; n++) {
    const page = retained.get(`${base}/${scope}/state-index/${n}`)
    if (page === undefined) throw new Error(`state index page ${n} of ${scope} is not retained`)
    pages.push(page.event.data as StateIndex)
  }
  return { head: first, pages, jobs: pages.flatMap((p) => p.jobs) }
}

/**
 * The state index of a scope by its definition, read in full from Valkey: every
 * listed job in list order, EndState left out, `has_result` for a finished job with a response.
 */
export const fullStateIndex = (scope: string) =>
  Effect.gen(function* () {
    const dao = yield* JobOrderDao
    const responses = yield* JobResponseDao
    const page = yield* dao.list(scope, { count: 100_000 })
    const jobs: Array<StateIndexJob> = []
    for (const { id } of page.items) {
      const decoded = decodeJobOrderRecord((yield* dao.get(id)).doc)
      if (Result.isFailure(decoded) || isTerminal(decoded.success.state)) continue
      const hasResult = isFinished(decoded.success.state)
        ? yield* responses.byOrder(id).pipe(Effect.as(true), Effect.catchTag("NotFound", () => Effect.succeed(false)))
        : false
      jobs.push({ job_order_id: id, state: normalizedName(decoded.success.state), has_result: hasResult })
    }
    return jobs
  })
