import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { Deferred, Effect, Either, FiberId, Stream } from "effect"
import { type CloudEvent, makeCloudEvent, makeMqttConnection } from "@microdcs/cloudevents-mqtt"
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

/**
 * The MES side of the demo, on its own MQTT connection: sends the station configuration, the
 * torque journal (by tool, with the `nok_torque_1h` counter the recipe reads) and the work
 * master, then the job orders with StoreAndStart, and follows the publisher's retained order
 * topics until every job has ended.
 */
export const runMes = (url: string, topics: { readonly prefix: string; readonly discriminator?: string | undefined }, jobs: number) =>
  Effect.gen(function* () {
    const mes = yield* makeMqttConnection({ url, clientIdBase: "demo-mes", connectTimeoutMs: 5000 })
    const d = topics.discriminator ? `/${topics.discriminator}` : ""
    const commandTopic = `${topics.prefix}/${SCOPE}${d}/commands`
    const replyTopic = `${topics.prefix}/replies/demo-mes-${randomUUID().slice(0, 8)}`
    // A reply completes its request's Deferred: waiting for it by polling (a 5 ms sleep loop per
    // request in flight) woke the process hundreds of times a second beside the island it measures.
    const replies = new Map<string, Deferred.Deferred<CloudEvent>>()
    const replyFor = (key: string) => {
      let reply = replies.get(key)
      if (reply === undefined) replies.set(key, (reply = Deferred.unsafeMake<CloudEvent>(FiberId.none)))
      return reply
    }
    const ended = new Map<string, { state: string; at: number }>()
    const submittedAt = new Map<string, number>()
    const allEnded = Deferred.unsafeMake<void>(FiberId.none)

    yield* (yield* mes.subscribe(replyTopic)).pipe(
      Stream.runForEach((m) =>
        Effect.sync(() => {
          if (Either.isRight(m.decoded) && m.correlationData) Deferred.unsafeDone(replyFor(m.correlationData.toString("hex")), Effect.succeed(m.decoded.right))
        }).pipe(Effect.zipRight(m.ack))
      ),
      Effect.forkScoped
    )
    yield* (yield* mes.subscribe(`${topics.prefix}${d}/${SCOPE}/order/+`)).pipe(
      Stream.runForEach((m) =>
        Effect.sync(() => {
          if (Either.isLeft(m.decoded)) return
          const data = m.decoded.right.data as { JobOrder?: { JobOrderID?: string }; State?: unknown } | undefined
          const id = data?.JobOrder?.JobOrderID
          const state = fromStoredState(data?.State)
          if (!id || Either.isLeft(state) || ended.has(id)) return
          const name = normalizedName(state.right)
          if (name.startsWith("Ended") || name === "Aborted") ended.set(id, { state: name, at: performance.now() })
          if (ended.size >= jobs) Deferred.unsafeDone(allEnded, Effect.void)
        }).pipe(Effect.zipRight(m.ack))
      ),
      Effect.forkScoped
    )

    /** Sends one request and waits for its reply; fails unless the island answers NO_ERROR. */
    const call = (type: string, data: unknown, extensions: Record<string, string> = {}) =>
      Effect.gen(function* () {
        const correlationId = randomUUID()
        const key = correlationId.replaceAll("-", "")
        const reply = replyFor(key)
        yield* mes.publish(commandTopic, makeCloudEvent({ source: MES_SOURCE, type, subject: SCOPE, data, extensions }), {
          responseTopic: replyTopic,
          correlationId
        })
        const answer = yield* Deferred.await(reply).pipe(
          Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error(`no reply to ${type}`) }),
          Effect.ensuring(Effect.sync(() => replies.delete(key)))
        )
        const status = (answer.data as { ReturnStatus?: number } | undefined)?.ReturnStatus
        if (status !== 1) return yield* Effect.fail(new Error(`${type} answered ${JSON.stringify(answer.data)}`))
      })

    console.log(`MES: configuring station line-1 (reference lists, journal torque, work master wm-axle-v1)`)
    yield* call(ConfigEventTypes.equipment, { ID: "station-7" })
    yield* call(ConfigEventTypes.materialclass, { MaterialClassID: "axle" })
    yield* call(ConfigEventTypes.materialdefinition, { MaterialDefinitionID: "axle-front-a2" })
    yield* call(ConfigEventTypes.personnel, { ID: "operator-12" })
    yield* call(ConfigEventTypes.physicalasset, { ID: "nutrunner-3" })
    yield* call(JOURNAL_CONFIG_EVENT_TYPE, fixture("journal-torque.json"))
    // The axle recipe that sends the tool to a check after its third NOK torque result in an hour.
    yield* call(ConfigEventTypes.workmaster, fixture("work-master-axle-toolcheck.json"))

    const template = fixture("job-order.json")
    console.log(`MES: submitting ${jobs} job orders with StoreAndStart`)
    const start = performance.now()
    const progress = setInterval(() => {
      const done = [...ended.values()]
      const line = `  submitted ${submittedAt.size}/${jobs}  completed ${done.filter((e) => e.state === "Ended_Completed").length}  failed ${done.filter((e) => e.state !== "Ended_Completed").length}`
      process.stdout.write(process.stdout.isTTY ? `\r${line}` : `${line}\n`)
    }, process.stdout.isTTY ? 200 : 1000)
    yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(progress)))
    yield* Effect.forEach(
      Array.from({ length: jobs }, (_, i) => `jo-axle-${String(i + 1).padStart(4, "0")}`),
      (id) =>
        Effect.sync(() => submittedAt.set(id, performance.now())).pipe(
          Effect.zipRight(call(MethodEventTypes.StoreAndStart, { JobOrder: { ...template, JobOrderID: id } }))
        ),
      { concurrency: 8, discard: true }
    )
    if (ended.size < jobs) yield* Deferred.await(allEnded).pipe(Effect.timeout("120 seconds"), Effect.option)
    clearInterval(progress)
    const elapsedSeconds = (performance.now() - start) / 1000
    const latencies = [...ended].map(([id, e]) => e.at - submittedAt.get(id)!).sort((a, b) => a - b)
    const completed = [...ended.values()].filter((e) => e.state === "Ended_Completed").length
    process.stdout.write(`\r  submitted ${jobs}/${jobs}  completed ${completed}  failed ${ended.size - completed}\n`)
    return {
      submitted: jobs,
      completed,
      failed: ended.size - completed,
      elapsedSeconds,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99)
    } satisfies DemoSummary
  })
