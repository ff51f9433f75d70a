import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { Deferred, Effect, Result, Stream } from "effect"
import { type CloudEvent, makeCloudEvent, makeMqttConnection, type MqttConnectionService } from "@microdcs/cloudevents-mqtt"
import { ConfigEventTypes } from "@microdcs/job-control"
import { fromStoredState, MethodEventTypes, normalizedName } from "@microdcs/job-state"
import { JOURNAL_CONFIG_EVENT_TYPE } from "@microdcs/journal"

const SCOPE = "line-1"
const MES_SOURCE = "urn:microdcs:demo:mes"

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8"))

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN

export interface DemoSummary {
  readonly submitted: number
  readonly completed: number
  readonly failed: number
  readonly elapsedSeconds: number
  readonly p50: number
  readonly p99: number
}

/** What the MES's functions share: its connection and topics, the replies awaited, and what it submitted and saw end. */
interface MesDeps {
  readonly mes: MqttConnectionService
  readonly jobs: number
  readonly commandTopic: string
  readonly replyTopic: string
  // A reply completes its request's Deferred: waiting for it by polling (a 5 ms sleep loop per
  // request in flight) woke the process hundreds of times a second beside the island it measures.
  readonly replies: Map<string, Deferred.Deferred<CloudEvent>>
  readonly ended: Map<string, { state: string; at: number }>
  readonly submittedAt: Map<string, number>
  readonly allEnded: Deferred.Deferred<void>
}

const replyFor = (d: MesDeps, key: string) => {
  let reply = d.replies.get(key)
  if (reply === undefined) d.replies.set(key, (reply = Deferred.makeUnsafe<CloudEvent>()))
  return reply
}

/** Completes each request's Deferred with its reply, found by its correlation data. */
const followReplies = (d: MesDeps) =>
  Effect.gen(function* () {
    yield* (yield* d.mes.subscribe(d.replyTopic)).pipe(
      Stream.runForEach((m) =>
        Effect.sync(() => {
          if (Result.isSuccess(m.decoded) && m.correlationData) Deferred.doneUnsafe(replyFor(d, m.correlationData.toString("hex")), Effect.succeed(m.decoded.success))
        }).pipe(Effect.andThen(m.ack))
      ),
      Effect.forkScoped
    )
  })

/** Notes when each job order ended, from the publisher's retained order topics. */
const followOrders = (d: MesDeps, orderFilter: string) =>
  Effect.gen(function* () {
    yield* (yield* d.mes.subscribe(orderFilter)).pipe(
      Stream.runForEach((m) =>
        Effect.sync(() => {
          if (Result.isFailure(m.decoded)) return
          const data = m.decoded.success.data as { JobOrder?: { JobOrderID?: string }; State?: unknown } | undefined
          const id = data?.JobOrder?.JobOrderID
          const state = fromStoredState(data?.State)
          if (!id || Result.isFailure(state) || d.ended.has(id)) return
          const name = normalizedName(state.success)
          if (name.startsWith("Ended") || name === "Aborted") d.ended.set(id, { state: name, at: performance.now() })
          if (d.ended.size >= d.jobs) Deferred.doneUnsafe(d.allEnded, Effect.void)
        }).pipe(Effect.andThen(m.ack))
      ),
      Effect.forkScoped
    )
  })

/** Sends one request and waits for its reply; fails unless the island answers NO_ERROR. */
const call = (d: MesDeps, type: string, data: unknown, extensions: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const correlationId = randomUUID()
    const key = correlationId.replaceAll("-", "")
    const reply = replyFor(d, key)
    yield* d.mes.publish(d.commandTopic, makeCloudEvent({ source: MES_SOURCE, type, subject: SCOPE, data, extensions }), {
      responseTopic: d.replyTopic,
      correlationId
    })
    const answer = yield* Deferred.await(reply).pipe(
      Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail(new Error(`no reply to ${type}`)) }),
      Effect.ensuring(Effect.sync(() => d.replies.delete(key)))
    )
    const status = (answer.data as { ReturnStatus?: number } | undefined)?.ReturnStatus
    if (status !== 1) return yield* Effect.fail(new Error(`${type} answered ${JSON.stringify(answer.data)}`))
  })

const configureStation = (d: MesDeps) =>
  Effect.gen(function* () {
    console.log(`MES: configuring station line-1 (reference lists, journal torque, work master wm-axle-v1)`)
    yield* call(d, ConfigEventTypes.equipment, { ID: "station-7" })
    yield* call(d, ConfigEventTypes.materialclass, { MaterialClassID: "axle" })
    yield* call(d, ConfigEventTypes.materialdefinition, { MaterialDefinitionID: "axle-front-a2" })
    yield* call(d, ConfigEventTypes.personnel, { ID: "operator-12" })
    yield* call(d, ConfigEventTypes.physicalasset, { ID: "nutrunner-3" })
    yield* call(d, JOURNAL_CONFIG_EVENT_TYPE, fixture("journal-torque.json"))
    // The axle recipe that sends the tool to a check after its third NOK torque result in an hour.
    yield* call(d, ConfigEventTypes.workmaster, fixture("work-master-axle-toolcheck.json"))
  })

/** Prints the submitted, completed and failed counts while the jobs run, until the scope closes. */
const showProgress = (d: MesDeps) => {
  const progress = setInterval(() => {
    const done = [...d.ended.values()]
    const line = `  submitted ${d.submittedAt.size}/${d.jobs}  completed ${done.filter((e) => e.state === "Ended_Completed").length}  failed ${done.filter((e) => e.state !== "Ended_Completed").length}`
    process.stdout.write(process.stdout.isTTY ? `\r${line}` : `${line}\n`)
  }, process.stdout.isTTY ? 200 : 1000)
  return Effect.as(Effect.addFinalizer(() => Effect.sync(() => clearInterval(progress))), progress)
}

const submitJobs = (d: MesDeps, template: Record<string, unknown>) =>
  Effect.forEach(
    Array.from({ length: d.jobs }, (_, i) => `jo-axle-${String(i + 1).padStart(4, "0")}`),
    (id) =>
      Effect.sync(() => d.submittedAt.set(id, performance.now())).pipe(
        Effect.andThen(call(d, MethodEventTypes.StoreAndStart, { JobOrder: { ...template, JobOrderID: id } }))
      ),
    { concurrency: 8, discard: true }
  )

const summaryOf = (d: MesDeps, elapsedSeconds: number): DemoSummary => {
  const latencies = [...d.ended].map(([id, e]) => e.at - d.submittedAt.get(id)!).sort((a, b) => a - b)
  const completed = [...d.ended.values()].filter((e) => e.state === "Ended_Completed").length
  process.stdout.write(`\r  submitted ${d.jobs}/${d.jobs}  completed ${completed}  failed ${d.ended.size - completed}\n`)
  return {
    submitted: d.jobs,
    completed,
    failed: d.ended.size - completed,
    elapsedSeconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99)
  }
}

/**
 * The MES side of the demo, on its own MQTT connection: sends the station configuration, the
 * torque journal (by tool, with the `nok_torque_1h` counter the recipe reads) and the work
 * master, then the job orders with StoreAndStart, and follows the publisher's retained order
 * topics until every job has ended.
 */
export const runMes = (url: string, topics: { readonly prefix: string; readonly discriminator?: string | undefined }, jobs: number) =>
  Effect.gen(function* () {
    const mes = yield* makeMqttConnection({ url, clientIdBase: "demo-mes", connectTimeoutMs: 5000 })
    const discriminator = topics.discriminator ? `/${topics.discriminator}` : ""
    const d: MesDeps = {
      mes,
      jobs,
      commandTopic: `${topics.prefix}/${SCOPE}${discriminator}/commands`,
      replyTopic: `${topics.prefix}/replies/demo-mes-${randomUUID().slice(0, 8)}`,
      replies: new Map(),
      ended: new Map(),
      submittedAt: new Map(),
      allEnded: Deferred.makeUnsafe<void>()
    }
    yield* followReplies(d)
    yield* followOrders(d, `${topics.prefix}${discriminator}/${SCOPE}/order/+`)
    yield* configureStation(d)
    const template = fixture("job-order.json")
    console.log(`MES: submitting ${jobs} job orders with StoreAndStart`)
    const start = performance.now()
    const progress = yield* showProgress(d)
    yield* submitJobs(d, template)
    if (d.ended.size < jobs) yield* Deferred.await(d.allEnded).pipe(Effect.timeout("120 seconds"), Effect.option)
    clearInterval(progress)
    return summaryOf(d, (performance.now() - start) / 1000)
  })
