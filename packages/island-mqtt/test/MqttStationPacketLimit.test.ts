import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { jobControlLayer } from "@microdcs/job-control"
import { MethodEventTypes, ReturnStatus } from "@microdcs/job-state"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { type EngineOptions, SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc-runtime"
import { randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { putWorkMaster } from "@microdcs/testkit"
import { JobControlIngress, makeSimulatedStation, MqttStation } from "@microdcs/island-mqtt"
import { eventually, ingressOptions, ISLAND_SOURCE, islandMqtt, makeMes, responseOf, responseSummary, SCOPE, startInstance, storeFor, topicsFor, untilJobOrderIs } from "./Kit.js"

/** A push command over the broker's Maximum Packet Size fails its action with the reason, instead of being sent again and again. */

const LIMIT = 16 * 1024

const testEngineOptions: Partial<EngineOptions> = { sweepIntervalMs: 50, fallbackIntervalMs: 100, reconcileIntervalMs: 60_000, claimIdleMs: 2_000 }

const islandWorld = (url: string, prefix: string) =>
  Layer.mergeAll(JobControlIngress(ingressOptions(prefix)), SfcEngineProcesses(testEngineOptions)).pipe(
    Layer.provide(MqttStation({ topics: topicsFor(prefix), instanceId: "engine-1", source: ISLAND_SOURCE, retryMinMs: 20, retryMaxMs: 200 })),
    Layer.provide(Layer.merge(jobControlLayer(), SfcRuntimeServices)),
    Layer.provide(islandMqtt(url)),
    Layer.provide(storeFor(prefix))
  )

/** One step that pushes `TypeId` with the given parameters. */
const pushWorkMaster = (id: string, typeId: string, parameters: object) => ({
  ID: id,
  dataschema: RECIPE_SCHEMA_ID,
  data: {
    Steps: [{ Name: "Push", Initial: true }],
    Transitions: [],
    Actions: [{ Name: "push", Step: "Push", Qualifier: "N", Interaction: "push_command", TypeId: typeId, TimeoutSeconds: 30, Parameters: parameters }]
  }
})

describe("MQTT station port and the broker's Maximum Packet Size", () => {
  it.live("a command too large for the broker fails its action (and the job) with both sizes; a small command after it reaches the station", () => {
    const prefix = randomPrefix("mp")
    return Effect.gen(function* () {
      const broker = yield* Effect.acquireRelease(
        Effect.promise(() => startMosquitto({ maxPacketSize: LIMIT })),
        (server) => Effect.promise(() => server.stop())
      )
      yield* startInstance(islandWorld(broker.url, prefix))
      const sim = yield* makeSimulatedStation({ url: broker.url, topics: topicsFor(prefix), onCommand: () => ({ data: { ok: true } }) })
      const mes = yield* makeMes(broker.url, prefix)
      // Stored directly, as the admin CLI would: the MES could not send a work master this large through this broker.
      yield* putWorkMaster(SCOPE, pushWorkMaster("wm-big", "com.example.big.v1", { blob: "x".repeat(2 * LIMIT) }))
      yield* putWorkMaster(SCOPE, pushWorkMaster("wm-small", "com.example.small.v1", { slot: 1 }))
      const started = yield* mes.call(MethodEventTypes.StoreAndStart, { JobOrder: { JobOrderID: "jo-big", WorkMasterID: [{ ID: "wm-big" }] } })
      expect(started.data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })
      expect(yield* untilJobOrderIs("jo-big", "Aborted", 20_000)).toBe("Aborted")
      const failed = responseSummary(yield* eventually(responseOf("jo-big")))
      expect(failed.error).toContain(`over the broker's maximum packet size of ${LIMIT} bytes`)
      yield* mes.call(MethodEventTypes.StoreAndStart, { JobOrder: { JobOrderID: "jo-small", WorkMasterID: [{ ID: "wm-small" }] } })
      expect(yield* untilJobOrderIs("jo-small", "Ended_Completed", 20_000)).toBe("Ended_Completed")
      expect(sim.commands.map((c) => c.type)).toEqual(["com.example.small.v1"])
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  }, 45_000)
})
