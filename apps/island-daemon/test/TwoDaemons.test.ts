import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Result, Layer, Stream } from "effect"
import { inject } from "vitest"
import { TRIGGER_CONFIG_EVENT_TYPE } from "@microdcs/job-control"
import { MethodEventTypes } from "@microdcs/job-state"
import { storeLayer, TriggerStore } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemon, daemonEnv, type DaemonProcess } from "./DaemonProcess.js"
import { axleJobOrder, axleStation, batchProblems, completedCount, configureAxleStation, eventually, makeMes, type Mes, SCOPE } from "./IslandKit.js"

/**
 * Two daemons on one island (one key prefix, one broker, a shared subscription group) and the
 * simulated station in the test process: a batch of axle jobs is finished exactly once.
 */

let broker: MosquittoServer
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  await broker?.stop()
})

const JOBS = 20

/** `microdcs_messages_total` of one daemon for a kind, summed over types and outcomes. */
const messagesHandled = (d: DaemonProcess, kind: string) =>
  Effect.promise(async () => {
    const text = (await d.get("/metrics")).text
    return text
      .split("\n")
      .filter((line) => line.startsWith("microdcs_messages_total{") && line.includes(`kind="${kind}"`) && line.includes(`outcome="ok"`))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0)
  })

/**
 * Trigger edits made through the store alone (as the admin CLI makes them) and through a config
 * event (one daemon makes it): each is announced once as `dag.triggers.changed` on `P/triggers`.
 */
const triggerEditsAnnouncedOnce = (mes: Mes, prefix: string) =>
  Effect.gen(function* () {
    const announced: Array<{ readonly id: string; readonly change: string; readonly version?: number }> = []
    yield* (yield* mes.connection.subscribe(`${prefix}/triggers`)).pipe(
      Stream.runForEach((m) =>
        Effect.sync(() => {
          if (Result.isSuccess(m.decoded) && m.decoded.success.type === "dag.triggers.changed") announced.push(m.decoded.success.data as (typeof announced)[number])
        }).pipe(Effect.andThen(m.ack))
      ),
      Effect.forkScoped
    )
    const store = yield* TriggerStore
    const row = { scope: SCOPE, type: "com.example.bin.empty.v1", workMasterId: "wm-axle-v1" }
    yield* store.put({ id: "t-cli", ...row })
    yield* mes.ok(TRIGGER_CONFIG_EVENT_TYPE, { id: "t-mes", type: row.type, workMasterId: row.workMasterId })
    yield* store.disable("t-cli")
    yield* eventually(Effect.sync(() => (announced.length >= 3 ? true : undefined)), 20_000, "three announcements")
    yield* Effect.sleep("500 millis") // room for a second daemon's duplicate, were there one
    const seen = announced.map((a) => `${a.id} ${a.change} v${a.version}`).sort()
    expect(seen).toEqual(["t-cli put v1", "t-cli put v2", "t-mes put v1"])
  })

describe("two daemons on one island", () => {
  it.live(
    "finish every job of a batch exactly once, and announce every trigger edit once, wherever it was made",
    () => {
      const prefix = randomPrefix("twin")
      return Effect.gen(function* () {
        const env = (instanceId: string) =>
          daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId, extra: { MQTT_SHARED_GROUP: "island" } })
        const [a, b] = yield* Effect.all([daemon(env("twin-a")), daemon(env("twin-b"))], { concurrency: 2 })
        const { reworked } = yield* axleStation(broker.url, prefix)
        const mes = yield* makeMes(broker.url, prefix)
        yield* configureAxleStation(mes)

        const ids = Array.from({ length: JOBS }, (_, i) => `jo-twin-${String(i + 1).padStart(2, "0")}`)
        yield* Effect.forEach(ids, (id) => mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(id) }), { concurrency: 8, discard: true })
        yield* eventually(
          Effect.map(completedCount(ids), (n) => (n === JOBS ? n : undefined)),
          40_000,
          "every job Ended_Completed"
        )
        expect(yield* batchProblems(ids)).toEqual([])
        // Jobs 05, 10, 15 and 20 went through the rework loop, and still completed once.
        expect([...reworked].sort()).toEqual(["jo-twin-05", "jo-twin-10", "jo-twin-15", "jo-twin-20"])

        // Both took part: the shared subscription split the MES requests between them.
        expect(yield* messagesHandled(a, "jobcontrol")).toBeGreaterThan(0)
        expect(yield* messagesHandled(b, "jobcontrol")).toBeGreaterThan(0)
        yield* triggerEditsAnnouncedOnce(mes, prefix)

        const exits = yield* Effect.promise(() => Promise.all([a.stop("SIGTERM"), b.stop("SIGTERM")]))
        expect(exits.map((e) => e.code)).toEqual([0, 0])
      }).pipe(Effect.scoped, Effect.provide(Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))))
    },
    60_000
  )
})
