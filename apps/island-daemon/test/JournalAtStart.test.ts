import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { inject } from "vitest"
import { makeCloudEvent } from "@microdcs/cloudevents-mqtt"
import { stationEventsTopic } from "@microdcs/island-mqtt"
import { ReturnStatus } from "@microdcs/job-state"
import { JOURNAL_CONFIG_EVENT_TYPE } from "@microdcs/journal"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"
import { eventually, fixture, makeMes, type Mes, SCOPE } from "./IslandKit.js"

/**
 * Station events that wait in the island's MQTT session while the daemon is stopped are
 * journaled, every one, when it starts again: the station ingress takes them only once the
 * journal's configurations are loaded, and acknowledges each only after its record.
 */

let broker: MosquittoServer
let daemon: DaemonProcess | undefined
const prefix = randomPrefix("ja")
const env = () => daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "ja-1" })

const TOOL = "nutrunner-9"
const TORQUE = "com.example.station.torque.v1"
const EVENTS = 30
const BURST_TOOL = "nutrunner-10"
const BURST = 60

beforeAll(async () => {
  broker = await startMosquitto()
})

afterAll(async () => {
  await daemon?.stop("SIGKILL")
  await broker?.stop()
})

const counterTotal = (d: DaemonProcess, tool = TOOL) =>
  Effect.promise(() => d.get(`/api/journals/${SCOPE}/torque/counters/torque_1h?value=${tool}`)).pipe(
    Effect.map((reply) => (reply.status === 200 ? (reply.json() as { total: number }).total : -1))
  )

/** Waits until the tool's `torque_1h` reads `total`; the failure says what it reads instead. */
const counterReaches = (d: DaemonProcess, total: number, tool = TOOL) =>
  eventually(Effect.map(counterTotal(d, tool), (read) => (read === total ? read : undefined)), 20_000, `counter torque_1h at ${total}`).pipe(
    Effect.catch(() => Effect.flatMap(counterTotal(d, tool), (read) => Effect.fail(new Error(`counter torque_1h of ${tool} reads ${read}, not ${total}`))))
  )

const torqueEvent = (tool: string, i: number) =>
  makeCloudEvent({ source: "urn:test:station-7", type: TORQUE, subject: SCOPE, data: { tool_id: tool, torque_ok: i % 3 !== 0, torque_nm: 80 + i } })

/** The daemon, started and ready, with the torque journal configured (again: a PUT of the same configuration changes nothing). */
const startConfigured = (mes: Mes) =>
  Effect.gen(function* () {
    daemon = yield* Effect.promise(() => spawnDaemon(env()))
    yield* Effect.promise(() => daemon!.waitReady())
    const configured = yield* mes.replyTo(yield* mes.send(JOURNAL_CONFIG_EVENT_TYPE, fixture("journal-torque.json")))
    expect((configured.data as { ReturnStatus: number }).ReturnStatus).toBe(ReturnStatus.NO_ERROR)
    return daemon
  })

describe("the journal at start-up", () => {
  it.live(
    "station events waiting in the session while the daemon was stopped are all journaled after its start, and the counter counts each",
    () =>
      Effect.gen(function* () {
        const mes = yield* makeMes(broker.url, prefix)
        yield* startConfigured(mes)
        // A clean stop: the subscriptions stay in the persistent session, which collects what comes meanwhile.
        yield* Effect.promise(() => daemon!.stop("SIGTERM"))

        const topic = yield* Effect.fromResult(stationEventsTopic({ prefix, wildcardLevels: 1 }, SCOPE))
        for (let i = 0; i < EVENTS; i++) yield* mes.connection.publish(topic, torqueEvent(TOOL, i), { qos: 1 })

        daemon = yield* Effect.promise(() => spawnDaemon(env()))
        yield* Effect.promise(() => daemon!.waitReady())
        const d = daemon
        // Every event counted, none more: the session redelivered them and each was journaled.
        yield* counterReaches(d, EVENTS)
        const nok = yield* Effect.promise(() => d.get(`/api/journals/${SCOPE}/torque/counters/nok_torque_1h?value=${TOOL}`))
        expect(nok.json()).toMatchObject({ total: EVENTS / 3 })
        const metrics = (yield* Effect.promise(() => d.get("/metrics"))).text
        expect(metrics).toMatch(new RegExp(`microdcs_journal_total\\{operation="record",outcome="inserted"\\} ${EVENTS}\\b`))
        expect(metrics).not.toMatch(/microdcs_journal_total\{operation="record",outcome="failed"\}/)
        expect(d.logs().filter((l) => l.message?.includes("not journaled"))).toEqual([])
      }).pipe(Effect.scoped),
    90_000
  )

  it.live(
    "kill -9 during a burst of station events: after the restart every event is journaled, each once",
    () =>
      Effect.gen(function* () {
        const mes = yield* makeMes(broker.url, prefix)
        const first = yield* startConfigured(mes)
        const topic = yield* Effect.fromResult(stationEventsTopic({ prefix, wildcardLevels: 1 }, SCOPE))
        const burst = Array.from({ length: BURST }, (_, i) => ({ _tag: "Publish" as const, topic, event: torqueEvent(BURST_TOOL, i), options: { qos: 1 as const } }))
        // The first part lands, the daemon dies while the rest arrives: some journaled, some not, some not yet acknowledged.
        yield* mes.connection.publishAll(burst.slice(0, BURST / 2))
        first.child.kill("SIGKILL")
        yield* mes.connection.publishAll(burst.slice(BURST / 2))
        yield* Effect.promise(() => first.exited)

        daemon = yield* Effect.promise(() => spawnDaemon(env()))
        yield* Effect.promise(() => daemon!.waitReady())
        yield* counterReaches(daemon, BURST, BURST_TOOL)
        expect(daemon.logs().filter((l) => l.message?.includes("not journaled"))).toEqual([])
      }).pipe(Effect.scoped),
    90_000
  )
})
