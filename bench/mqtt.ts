/**
 * The island's MQTT front door: request-to-reply latency of job control methods and sustained
 * methods per second, each next to the raw MQTT round trip (mqtt.js, QoS 1, loopback) measured
 * against the same broker in the same run. Then the sustained load: StoreAndStart at
 * BENCH_LOAD_RATE per second (default 200) for BENCH_LOAD_SECONDS (default 20; 0 skips it, 60 for
 * the issue's figure) with the engine running, p50/p99 end to end (SustainedLoad.ts).
 * BENCH_LOAD_ONLY=1 runs the load alone.
 */
import { randomUUID } from "node:crypto"
import { Effect, Layer, Stream } from "effect"
import { connectAsync, type MqttClient } from "mqtt"
import { makeCloudEvent, makeMqttConnection, MqttConnection } from "@microdcs/cloudevents-mqtt"
import { JobControlIngress } from "@microdcs/island-mqtt"
import { jobControlLayer } from "@microdcs/job-control"
import { storeLayer } from "@microdcs/store"
import { randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { makeMes } from "./BenchMes.js"
import { latency, type Latency, throughputOf, throughputOfEffect } from "./Measure.js"
import { SAMPLES } from "./Settings.js"
import { LOAD_SECONDS, printLoad, runLoad } from "./SustainedLoad.js"

const IN_FLIGHT = 32
/** The target of the Store methods at IN_FLIGHT in flight, as a share of the raw MQTT echo. */
const STORE_SHARE_TARGET = 0.5
const OPS = Number(process.env["BENCH_MQTT_OPS"] ?? 5000)

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
          Effect.andThen(request.ack),
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
        `${`${((figures.perSecond / raw.echoPerSecond) * 100).toFixed(0)}%`.padStart(8)}  of the raw echo, ` +
        `target ≥ ${STORE_SHARE_TARGET * 100}% ${figures.perSecond >= STORE_SHARE_TARGET * raw.echoPerSecond ? "ok" : "MISSED"}`
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
