/**
 * The island's MQTT front door: request-to-reply latency of job control methods and sustained
 * methods per second, each next to the raw MQTT round trip (mqtt.js, QoS 1, loopback) measured
 * against the same broker in the same run. Then the sustained load: StoreAndStart at
 * BENCH_LOAD_RATE per second (default 200) for BENCH_LOAD_SECONDS (default 20; 0 skips it, 60 for
 * the issue's figure) with the engine running, p50/p99 end to end. BENCH_LOAD_ONLY=1 runs the
 * load alone.
 */
import { randomUUID } from "node:crypto"
import { fileURLToPath } from "node:url"
import { Deferred, Effect, Either, Fiber, Layer, Stream } from "effect"
import { connectAsync, type MqttClient } from "mqtt"
import { makeCloudEvent, makeMqttConnection, MqttConnection } from "@microdcs/cloudevents-mqtt"
import { JobControlIngress } from "@microdcs/island-mqtt"
import { jobControlLayer } from "@microdcs/job-control"
import { MethodEventTypes } from "@microdcs/job-state"
import { ChangeStream, storeLayer, WorkMasterDao } from "@microdcs/store"
import { randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { latency, type Latency, summarize, throughputOf, throughputOfEffect } from "./Measure.js"
import { SAMPLES } from "./Settings.js"
import { forkChild, reap } from "./ChildProcess.js"
import { LOAD_SCOPE, LOAD_STEPS, loadIsland, loadWorkMaster } from "./LoadIsland.js"
import type { FromLoadIsland, LoadIslandConfig, ToLoadIsland } from "./LoadIslandChild.js"

const IN_FLIGHT = 32
// The sustained load: StoreAndStart at a fixed rate for a while, with the engine running.
const LOAD_RATE = Number(process.env["BENCH_LOAD_RATE"] ?? 200)
const LOAD_SECONDS = Number(process.env["BENCH_LOAD_SECONDS"] ?? 20)
const OPS = Number(process.env["BENCH_MQTT_OPS"] ?? 5000)
const SCOPE = LOAD_SCOPE

/**
 * A raw mqtt.js v5 client, the baseline every figure is compared with. Nagle's algorithm off, as
 * on the island's connections: with it, every hop of a request/reply waits ~40 ms for a delayed ACK.
 */
const rawClient = async (url: string) => {
  const client = await connectAsync(url, { protocolVersion: 5, clientId: `bench-raw-${randomUUID().slice(0, 8)}` })
  ;(client.stream as { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true)
  return client
}

/**
 * Raw figures: one hop (publish QoS 1 → a subscriber receives it) and a request/reply echo
 * (publish → an echo client republishes → the requester receives), the shape of a method call.
 */
const rawFigures = async (url: string, prefix: string) => {
  const [a, b] = await Promise.all([rawClient(url), rawClient(url)])
  const waiting = new Map<string, () => void>()
  const onMessage = (_topic: string, payload: Buffer) => waiting.get(payload.toString())?.()
  a.on("message", onMessage)
  // b echoes requests back to a.
  b.on("message", (topic, payload) => {
    if (topic === `${prefix}/raw/req`) b.publish(`${prefix}/raw/rep`, payload, { qos: 1 })
    else onMessage(topic, payload)
  })
  await Promise.all([a.subscribeAsync(`${prefix}/raw/rep`, { qos: 1 }), b.subscribeAsync([`${prefix}/raw/req`, `${prefix}/raw/hop`], { qos: 1 })])
  const roundTrip = (client: MqttClient, topic: string) => () =>
    new Promise<void>((resolve, reject) => {
      const id = randomUUID()
      waiting.set(id, () => {
        waiting.delete(id)
        resolve()
      })
      client.publish(topic, id, { qos: 1 }, (error) => error && reject(error))
    })
  const hop = roundTrip(a, `${prefix}/raw/hop`)
  const echo = roundTrip(a, `${prefix}/raw/req`)
  const options = { warmup: 200, samples: SAMPLES }
  const figures = await Effect.runPromise(
    Effect.all([
      latency("raw publish → receive (1 hop)", options, () => Effect.promise(hop)),
      latency("raw request → echo reply (2 hops)", options, () => Effect.promise(echo))
    ])
  )
  const cpu = process.cpuUsage()
  const echoPerSecond = await throughputOf(OPS, IN_FLIGHT, echo)
  const echoCpuUs = cpuUsPerOp(cpu, OPS)
  await Promise.all([a.endAsync(), b.endAsync()])
  return { hop: figures[0], echo: figures[1], echoPerSecond, echoCpuUs }
}

/** An MES on one connection: a method call is a publish with our response topic, then its reply (the soak's MES too). */
export const makeMes = (url: string, prefix: string) =>
  Effect.gen(function* () {
    const mqtt = yield* makeMqttConnection({ url, clientIdBase: "bench-mes", receiveMaximum: 100 })
    const replyTopic = `${prefix}/replies/bench-mes`
    const pending = new Map<string, Deferred.Deferred<number>>()
    const replies = yield* mqtt.subscribe(replyTopic)
    yield* replies.pipe(
      Stream.runForEach((reply) => {
        const decoded = Either.getOrUndefined(reply.decoded)
        const waiter = decoded ? pending.get(decoded.extensions["correlationid"] ?? "") : undefined
        const status = Number((decoded?.data as { ReturnStatus?: number } | undefined)?.ReturnStatus)
        return (waiter ? Deferred.succeed(waiter, status) : Effect.void).pipe(Effect.zipRight(reply.ack))
      }),
      Effect.forkScoped
    )
    const request = (topic: string, type: string, data: unknown) =>
      Effect.gen(function* () {
        const correlationId = randomUUID()
        const done = yield* Deferred.make<number>()
        pending.set(correlationId, done)
        const event = makeCloudEvent({ source: "urn:bench:mes", type, subject: SCOPE, data })
        yield* mqtt.publish(topic, event, { responseTopic: replyTopic, correlationId })
        const status = yield* Deferred.await(done)
        pending.delete(correlationId)
        if (status !== 1) return yield* Effect.dieMessage(`${type} answered ReturnStatus ${status}`)
      })
    const call = (method: "Store" | "Start" | "StoreAndStart", data: unknown) => request(`${prefix}/${SCOPE}/commands`, MethodEventTypes[method], data)
    return { call, request } as const
  })

/**
 * The CloudEvents layer alone: a responder on `MqttConnection` that replies at once, on a topic
 * outside the island's command filters. Between the raw echo and a method call, it shows what the
 * codec and the connection cost before Valkey is involved.
 */
const startEchoResponder = (url: string, topic: string) =>
  Effect.gen(function* () {
    const mqtt = yield* makeMqttConnection({ url, clientIdBase: "bench-echo", receiveMaximum: 100 })
    const requests = yield* mqtt.subscribe(topic)
    yield* requests.pipe(
      Stream.runForEach((request) =>
        mqtt.reply(request, makeCloudEvent({ source: "urn:bench:echo", type: "bench.echo.v1", data: { ReturnStatus: 1 } })).pipe(
          Effect.zipRight(request.ack),
          Effect.orDie
        )
      ),
      Effect.forkScoped
    )
  })

const jobOrder = (id: string) => ({ JobOrder: { JobOrderID: id, Priority: 1, Description: "Front axle, order 4711" } })

const fmt = (n: number, digits = 3) => n.toFixed(digits)

/**
 * CPU time of this process (both ends of every call run in it) per operation since `since`. On a
 * shared machine it moves less than a rate does when other work competes for the cores.
 */
const cpuUsPerOp = (since: NodeJS.CpuUsage, ops: number) => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / ops
}

const printRows = (baseline: Latency, rows: ReadonlyArray<Latency>) => {
  console.log(`  ${"operation".padEnd(40)} ${"median ms".padStart(10)} ${"p99 ms".padStart(9)} ${"× 1 hop".padStart(8)}`)
  for (const row of [baseline, ...rows]) {
    console.log(`  ${row.name.padEnd(40)} ${fmt(row.median).padStart(10)} ${fmt(row.p99).padStart(9)} ${fmt(row.median / baseline.median, 2).padStart(8)}`)
  }
}

interface LoadFigures {
  readonly submitted: number
  readonly replied: number
  readonly completed: number
  readonly endToEnd: Latency
  readonly reply: Latency
  readonly seconds: number
  /** The island process's CPU over the measured load, µs; undefined when it shares this process. */
  readonly islandCpuMicros: number | undefined
}

/** BENCH_LOAD_IN_PROCESS=1: the island in this process, beside the load generator (as before). */
const LOAD_IN_PROCESS = process.env["BENCH_LOAD_IN_PROCESS"] === "1"
/** Seconds of unmeasured load first (BENCH_LOAD_WARMUP_SECONDS, default 2): the island's JIT warms up. */
const LOAD_WARMUP_SECONDS = Math.max(0, Number(process.env["BENCH_LOAD_WARMUP_SECONDS"] ?? 2))

const islandChildScript = fileURLToPath(new URL("./LoadIslandChild.ts", import.meta.url))

/** The load's island in a child process; `stop` ends it and waits for its exit. */
const startLoadIsland = (config: LoadIslandConfig) => {
  const { child, exited, message, tell } = forkChild<FromLoadIsland, ToLoadIsland>(islandChildScript, "load island", "BENCH_LOAD_ISLAND", config)
  return { ready: message("ready"), report: message("report"), stop: () => reap(child, exited, child.exitCode === null), tell }
}

/**
 * The sustained load (issue 11): StoreAndStart over MQTT at LOAD_RATE per second for LOAD_SECONDS,
 * open loop (each request is sent at its scheduled time, whatever the earlier ones are doing, and
 * timed from then), into one island with its engine and an instant in-process station, in a
 * process of its own (the MES is another system; BENCH_LOAD_IN_PROCESS=1 keeps it here). End to
 * end is the scheduled submission to the job order's Complete (Ended_Completed) in the scope's
 * change stream, polled every 5 ms. Warm-up load first, unmeasured.
 */
const runLoad = (brokerUrl: string, valkeyUrl: string) =>
  Effect.gen(function* () {
    const prefix = randomPrefix("bench-load")
    const child = LOAD_IN_PROCESS ? undefined : startLoadIsland({ brokerUrl, valkeyUrl, prefix })
    yield* Effect.addFinalizer(() => Effect.promise(async () => child?.stop()))
    if (child) yield* Effect.promise(() => child.ready)
    const here = LOAD_IN_PROCESS ? loadIsland(brokerUrl, valkeyUrl, prefix) : storeLayer({ url: valkeyUrl, prefix, connectionName: "bench-load-mes" })
    return yield* Effect.gen(function* () {
      const workMasters = yield* WorkMasterDao
      const changes = yield* ChangeStream
      yield* workMasters.put({ id: loadWorkMaster.ID, scope: SCOPE, doc: JSON.stringify(loadWorkMaster), expectedVersion: -1 })
      const { call } = yield* makeMes(brokerUrl, prefix)
      const jobOrderOf = (id: string) => ({ JobOrder: { JobOrderID: id, Priority: 1, WorkMasterID: [{ ID: loadWorkMaster.ID }] } })
      /** Sends `count` StoreAndStarts at LOAD_RATE from `start`, each in a fiber of its own; `sent` sees each at its scheduled time. */
      const atRate = (count: number, start: number, name: (i: number) => string, sent: (id: string, at: number) => void, replied: (at: number) => void) =>
        Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
          Effect.gen(function* () {
            const at = start + (i * 1000) / LOAD_RATE
            const wait = at - performance.now()
            if (wait > 1) yield* Effect.sleep(`${Math.floor(wait)} millis`)
            const id = name(i)
            sent(id, at)
            return yield* call("StoreAndStart", jobOrderOf(id)).pipe(Effect.tap(() => Effect.sync(() => replied(at))), Effect.fork)
          })
        )
      // Unmeasured: the island's code is compiled by the JIT before the measured load.
      const warm = Math.round(LOAD_RATE * LOAD_WARMUP_SECONDS)
      if (warm > 0) {
        const warming = yield* atRate(warm, performance.now() + 50, (i) => `warm-${i}`, () => undefined, () => undefined)
        yield* Effect.forEach(warming, Fiber.join, { discard: true }).pipe(Effect.timeout("30 seconds"), Effect.ignore)
        yield* Effect.sleep("1 second")
      }
      const total = Math.max(1, Math.round(LOAD_RATE * LOAD_SECONDS))
      const scheduledAt = new Map<string, number>()
      const replyMs: Array<number> = []
      const endMs: Array<number> = []
      // The watcher: every job order that reached Ended_Completed, from the change stream.
      const watcher = yield* Effect.gen(function* () {
        let cursor = "0"
        while (endMs.length < total) {
          const page = yield* changes.read(SCOPE, { after: cursor, count: 1000 })
          const now = performance.now()
          for (const entry of page.entries) {
            const at = entry.kind === "joborder" && entry.change === "Complete" ? scheduledAt.get(entry.id) : undefined
            if (at !== undefined) endMs.push(now - at)
          }
          cursor = page.next
          if (page.entries.length < 1000) yield* Effect.sleep("5 millis")
        }
      }).pipe(Effect.fork)
      child?.tell({ type: "start" })
      const start = performance.now() + 50
      const senders = yield* atRate(total, start, (i) => `load-${i}`, (id, at) => void scheduledAt.set(id, at), (at) => void replyMs.push(performance.now() - at))
      // A request without a reply a minute after the last submission is counted as missing: a
      // broker whose queue for the island overflowed (mosquitto keeps 1000 per client) drops the
      // rest, and waiting longer would hang the run.
      yield* Effect.forEach(senders, Fiber.join, { discard: true }).pipe(Effect.timeout("60 seconds"), Effect.ignore)
      yield* Effect.forEach(senders, Fiber.interrupt, { discard: true })
      yield* Fiber.join(watcher).pipe(Effect.timeout("30 seconds"), Effect.ignore)
      yield* Fiber.interrupt(watcher)
      const seconds = (performance.now() - start) / 1000
      child?.tell({ type: "stop" })
      const report = child ? yield* Effect.promise(() => child.report) : undefined
      return {
        submitted: total,
        replied: replyMs.length,
        completed: endMs.length,
        endToEnd: summarize(`end to end (StoreAndStart → Ended_Completed)`, endMs),
        reply: summarize(`StoreAndStart, request → reply`, replyMs),
        seconds,
        islandCpuMicros: report?.cpuMicros
      } satisfies LoadFigures
    }).pipe(Effect.provide(here))
  }).pipe(Effect.scoped)

const printLoad = (load: LoadFigures) => {
  console.log(
    `\nSustained load: StoreAndStart over MQTT at ${LOAD_RATE}/s for ${LOAD_SECONDS} s (BENCH_LOAD_RATE, BENCH_LOAD_SECONDS), ` +
      `one island with its engine, ${LOAD_STEPS}-step recipe, instant in-process station, ` +
      (LOAD_IN_PROCESS ? "in the load generator's process" : "in a process of its own") +
      (LOAD_WARMUP_SECONDS > 0 ? `, after ${LOAD_WARMUP_SECONDS} s of unmeasured load` : "")
  )
  console.log(`  ${"operation".padEnd(48)} ${"p50 ms".padStart(9)} ${"p99 ms".padStart(9)}  target`)
  for (const row of [load.reply, load.endToEnd]) {
    const target = row === load.endToEnd ? `p99 < 1000 ${row.p99 < 1000 && load.completed === load.submitted ? "ok" : "MISSED"}` : ""
    console.log(`  ${row.name.padEnd(48)} ${fmt(row.median, 1).padStart(9)} ${fmt(row.p99, 1).padStart(9)}  ${target}`)
  }
  console.log(`  replies ${load.replied}, completed ${load.completed} of ${load.submitted} job orders`)
  if (load.islandCpuMicros !== undefined) {
    console.log(
      `  island process CPU: ${(load.islandCpuMicros / load.submitted / 1000).toFixed(2)} ms per job order, ` +
        `${((load.islandCpuMicros / 1e6 / load.seconds) * 100).toFixed(0)} % of one core`
    )
  }
}

export const runMqttBench = async (valkeyUrl: string) => {
  const broker = await startMosquitto()
  try {
    // BENCH_LOAD_ONLY=1: the sustained load alone.
    if (process.env["BENCH_LOAD_ONLY"] === "1") return printLoad(await Effect.runPromise(runLoad(broker.url, valkeyUrl)))
    const prefix = randomPrefix("bench-mqtt")
    const raw = await rawFigures(broker.url, prefix)
    const island = JobControlIngress({ topics: { prefix, wildcardLevels: 1 }, source: "urn:bench:island", concurrency: IN_FLIGHT }).pipe(
      Layer.provide(jobControlLayer()),
      Layer.provide(MqttConnection.layer({ url: broker.url, clientIdBase: "bench-island", receiveMaximum: 2 * IN_FLIGHT })),
      Layer.provide(storeLayer({ url: valkeyUrl, prefix, connectionName: "bench-mqtt" }))
    )
    const figures = await Effect.gen(function* () {
      const { call, request } = yield* makeMes(broker.url, prefix)
      const options = { warmup: 200, samples: SAMPLES }
      const echoTopic = `${prefix}-echo/requests`
      yield* startEchoResponder(broker.url, echoTopic)
      const echo = yield* latency("CloudEvents echo via MqttConnection", options, () => request(echoTopic, "bench.echo.v1", { ping: 1 }))
      const store = yield* latency("Store, request → reply", options, (i) => call("Store", jobOrder(`s-${i}`)))
      // Start needs stored job orders: store them first, untimed.
      const total = options.warmup + options.samples
      yield* Effect.forEach(Array.from({ length: total }, (_, i) => i), (i) => call("Store", jobOrder(`t-${i}`)), { concurrency: IN_FLIGHT, discard: true })
      const start = yield* latency("Start, request → reply", options, (i) => call("Start", { JobOrderID: `t-${i}` }))
      const cpu = process.cpuUsage()
      const perSecond = yield* throughputOfEffect(OPS, IN_FLIGHT, (i) => call("Store", jobOrder(`p-${i}`)))
      const cpuUs = cpuUsPerOp(cpu, OPS)
      return { echo, store, start, perSecond, cpuUs }
    }).pipe(Effect.scoped, Effect.provide(island), Effect.runPromise)

    console.log(`\nMQTT front door: job control methods through mosquitto at ${broker.url}, one island, QoS 1`)
    printRows(raw.hop, [raw.echo, figures.echo, figures.store, figures.start])
    console.log(`  ${`raw echo/s, ${IN_FLIGHT} in flight`.padEnd(40)} ${raw.echoPerSecond.toFixed(0).padStart(10)}`)
    console.log(
      `  ${`Store methods/s, ${IN_FLIGHT} in flight`.padEnd(40)} ${figures.perSecond.toFixed(0).padStart(10)} ` +
        `${`${((figures.perSecond / raw.echoPerSecond) * 100).toFixed(0)}%`.padStart(8)}  of the raw echo`
    )
    console.log(
      `  ${"CPU µs per call (MES + island, 1 process)".padEnd(40)} ${figures.cpuUs.toFixed(0).padStart(10)} ` +
        `${`${(figures.cpuUs / raw.echoCpuUs).toFixed(1)}×`.padStart(8)}  the raw echo's ${raw.echoCpuUs.toFixed(0)} µs`
    )
    if (LOAD_SECONDS > 0) printLoad(await Effect.runPromise(runLoad(broker.url, valkeyUrl)))
  } finally {
    await broker.stop()
  }
}
