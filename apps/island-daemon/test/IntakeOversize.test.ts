import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { connect as connectRaw } from "mqtt"
import { inject } from "vitest"
import { brokerPacketLimitOf, makeCloudEvent, makeMqttConnection } from "@microdcs/cloudevents-mqtt"
import { ConfigEventTypes } from "@microdcs/job-control"
import { MethodEventTypes, ReturnStatus } from "@microdcs/job-state"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"
import { axleJobOrder, makeMes, MES_SOURCE, SCOPE } from "./IslandKit.js"

/**
 * Requests over the Maximum Packet Size the island announces. mosquitto drops each one for the
 * island unsent but keeps the in-flight slot it took for it; after Receive Maximum (64) of them it
 * sent the island nothing more, not even small requests, until a restart, while `/readyz` said
 * 200. The island now notices (its probe does not come back), reports it, and reconnects.
 */

let broker: MosquittoServer
let daemon: DaemonProcess | undefined
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  await daemon?.stop("SIGKILL")
  await broker?.stop()
})

const OVERSIZE = 100
const SMALL = 10
/** 1.9 MiB: over the island's default Maximum Packet Size (576 KiB). */
const OVERSIZE_BYTES = Math.round(1.9 * 1024 * 1024)

type Readiness = { readonly checks: Record<string, boolean>; readonly problems: ReadonlyArray<string> }

/** Every `/readyz` answer from now until the scope closes, every 50 ms. */
const watchReadiness = (d: DaemonProcess) =>
  Effect.gen(function* () {
    const seen: Array<{ readonly status: number; readonly body: Readiness }> = []
    const poll = Effect.promise(() => d.get("/readyz")).pipe(
      Effect.tap((reply) => Effect.sync(() => seen.push({ status: reply.status, body: reply.json() as Readiness }))),
      Effect.ignore,
      Effect.andThen(Effect.sleep("50 millis")),
      Effect.forever
    )
    yield* Effect.forkScoped(poll)
    return seen
  })

describe("oversize requests", () => {
  it.live(
    `${OVERSIZE} requests over the Maximum Packet Size, then ${SMALL} small ones: every small one is answered; /readyz reported the stalled intake meanwhile`,
    () =>
      Effect.gen(function* () {
        const prefix = randomPrefix("io")
        daemon = yield* Effect.promise(() => spawnDaemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "io-1", extra: { MQTT_INTAKE_PROBE_MS: "2000" } })))
        const d = daemon
        yield* Effect.promise(() => d.waitReady())
        const readiness = yield* watchReadiness(d)

        // An MES that sends what the broker takes (up to its own 4 MiB) and expects replies.
        const big = yield* makeMqttConnection({ url: broker.url, clientIdBase: "mes-big", connectTimeoutMs: 5000, maxPayloadBytes: 4 * 1024 * 1024 })
        const padding = "x".repeat(OVERSIZE_BYTES)
        for (let i = 0; i < OVERSIZE; i++) {
          const request = makeCloudEvent({ source: MES_SOURCE, type: MethodEventTypes.StoreAndStart, subject: SCOPE, data: { JobOrder: { ...axleJobOrder(`jo-big-${i}`), Padding: padding } } })
          yield* big.publish(`${prefix}/${SCOPE}/commands`, request, { responseTopic: `${prefix}/replies/mes-big`, correlationId: crypto.randomUUID() })
        }

        const mes = yield* makeMes(broker.url, prefix)
        const sent = yield* Effect.forEach(Array.from({ length: SMALL }, (_, i) => i), (i) => mes.send(ConfigEventTypes.equipment, { ID: `station-${i}` }))
        const replies = yield* Effect.forEach(sent, (id) => mes.replyTo(id, 60_000))
        expect(replies.map((r) => (r.data as { ReturnStatus?: number }).ReturnStatus)).toEqual(sent.map(() => ReturnStatus.NO_ERROR))

        expect(d.logs().some((l) => l.message === "mqtt intake stalled; reconnecting")).toBe(true)
        const stalled = readiness.find((r) => r.status === 503 && r.body.checks["intake"] === false)
        expect(stalled?.body.problems.some((p) => p.startsWith("mqtt intake stalled"))).toBe(true)
        // Flowing again: the next look finds messages or its probe back, and /readyz turns 200.
        yield* Effect.promise(() => d.waitReady())
      }).pipe(Effect.scoped),
    150_000
  )

  it.live(
    "the embedded broker announces a Maximum Packet Size that fits the island's own, so it never has to drop a message for the island",
    () =>
      Effect.gen(function* () {
        const prefix = randomPrefix("io")
        const { MQTT_URL: _external, ...env } = daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: "", prefix, instanceId: "io-2" })
        daemon = yield* Effect.promise(() => spawnDaemon(env))
        const d = daemon
        yield* Effect.promise(() => d.waitReady())
        const url = String(d.logs().find((l) => l.message === "embedded mosquitto started")?.annotations?.["url"])
        const announced = yield* Effect.promise(
          () =>
            new Promise<number | undefined>((resolve, reject) => {
              const client = connectRaw(url, { protocolVersion: 5, reconnectPeriod: 0, connectTimeout: 5000 })
              client.on("error", reject)
              client.once("connect", (connack) => {
                client.end(true)
                resolve(connack.properties?.maximumPacketSize)
              })
            })
        )
        expect(announced).toBe(brokerPacketLimitOf({}))
        const mes = yield* makeMes(url, prefix)
        yield* mes.ok(ConfigEventTypes.equipment, { ID: "station-7" })
        yield* Effect.promise(() => d.stop("SIGTERM"))
      }).pipe(Effect.scoped),
    60_000
  )
})
