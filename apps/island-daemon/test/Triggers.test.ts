import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { makeCloudEvent } from "@microdcs/cloudevents-mqtt"
import { ConfigEventTypes, TRIGGER_CONFIG_EVENT_TYPE, triggerJobOrderId } from "@microdcs/job-control"
import { ReturnStatus } from "@microdcs/job-state"
import { JobOrderDao, storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"
import { eventually, jobOrderOf, makeMes, SCOPE } from "./IslandKit.js"

/**
 * Triggers in a running daemon: configured with their config CloudEvent,
 * live for the events that follow (the refresh is an hour away), a redelivered event starting
 * one job order, and a trigger naming an unknown work master refused by the acceptance checks.
 */

let broker: MosquittoServer
let daemon: DaemonProcess | undefined
const prefix = randomPrefix("tg")
const store = Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))

beforeAll(async () => {
  broker = await startMosquitto()
  daemon = await spawnDaemon(
    daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId: "tg-1", extra: { ISLAND_ROLES: "job-control", TRIGGER_REFRESH_INTERVAL_MS: "3600000" } })
  )
  await daemon.waitReady()
}, 60_000)

afterAll(async () => {
  await daemon?.stop("SIGTERM")
  await broker?.stop()
})

/** The value of `microdcs_triggers_total` for one outcome (and kind), 0 when not counted yet. */
const triggerCount = (outcome: string, kind = "") =>
  Effect.promise(async () => {
    const text = (await daemon!.get("/metrics")).text
    const line = text.split("\n").find((l) => l.startsWith(`microdcs_triggers_total{outcome="${outcome}",kind="${kind}"}`))
    return line === undefined ? 0 : Number(line.split(" ").pop())
  })

describe("triggers in the daemon", () => {
  it.live(
    "an edit is live for the next event, a redelivery starts nothing twice, an unknown work master is refused",
    () =>
      Effect.gen(function* () {
        const mes = yield* makeMes(broker.url, prefix)
        yield* mes.ok(ConfigEventTypes.workmaster, { ID: "wm-restock" })
        const bad = yield* mes.replyTo(yield* mes.send(TRIGGER_CONFIG_EVENT_TYPE, { id: "t 1", type: "", workMasterId: "wm-restock" }))
        expect((bad.data as { ReturnStatus: number }).ReturnStatus).toBe(ReturnStatus.INVALID_REQUEST)
        expect((bad.data as { Problems: ReadonlyArray<string> }).Problems).toHaveLength(2)

        yield* mes.ok(TRIGGER_CONFIG_EVENT_TYPE, { id: "t-restock", type: "com.example.bin.empty.v1", workMasterId: "wm-restock", priority: 4 })
        const event = makeCloudEvent({ source: "urn:station:7", type: "com.example.bin.empty.v1", subject: `${SCOPE}/bin-3` })
        const jobId = triggerJobOrderId("t-restock", event)
        const topic = `${prefix}/station/${SCOPE}/events`
        // The same event again until its job order is there: the edit reaches the ingress through
        // the nudge within moments, and every copy sent meanwhile is the same event.
        const order = yield* eventually(
          Effect.gen(function* () {
            yield* mes.connection.publish(topic, event)
            yield* Effect.sleep("100 millis")
            return yield* jobOrderOf(jobId)
          }),
          20_000,
          "triggered job order"
        )
        expect(order.state).toBe("AllowedToStart_Ready")
        const duplicatesBefore = yield* triggerCount("duplicate")
        yield* mes.connection.publish(topic, event)
        yield* eventually(Effect.map(triggerCount("duplicate"), (n) => (n > duplicatesBefore ? n : undefined)), 20_000, "duplicate counted")
        expect(yield* triggerCount("started")).toBe(1)
        const listed = yield* Effect.flatMap(JobOrderDao, (d) => d.list(SCOPE))
        expect(listed.items.map((i) => i.id)).toEqual([jobId])

        yield* mes.ok(TRIGGER_CONFIG_EVENT_TYPE, { id: "t-nowhere", type: "com.example.bin.full.v1", workMasterId: "wm-nowhere" })
        const full = makeCloudEvent({ source: "urn:station:7", type: "com.example.bin.full.v1", subject: SCOPE })
        yield* eventually(
          Effect.gen(function* () {
            yield* mes.connection.publish(`${prefix}/${SCOPE}/events`, full)
            yield* Effect.sleep("100 millis")
            const refused = yield* triggerCount("refused", "UnknownReference")
            return refused > 0 ? refused : undefined
          }),
          20_000,
          "refusal counted"
        )
        expect(yield* jobOrderOf(triggerJobOrderId("t-nowhere", full))).toBeUndefined()
      }).pipe(Effect.scoped, Effect.provide(store)),
    90_000
  )
})
