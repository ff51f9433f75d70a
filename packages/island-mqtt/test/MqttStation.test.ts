import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Layer, Stream } from "effect"
import { isUuid, makeCloudEvent, makeMqttConnection } from "@microdcs/cloudevents-mqtt"
import { ConfigEventTypes, jobControlLayer } from "@microdcs/job-control"
import { MethodEventTypes, QueryEventTypes, ReturnStatus } from "@microdcs/job-state"
import { type EngineOptions, SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc-runtime"
import { RECIPE_SCHEMA_ID, RECIPE_SCHEMA_ID_V1_1 } from "@microdcs/sfc"
import { SfcStateDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import { JobControlIngress, makeSimulatedStation, MqttStation, type SimulatedStationOptions, stationCommandFilter } from "@microdcs/island-mqtt"
import {
  eventually,
  fixture,
  ingressOptions,
  ISLAND_SOURCE,
  islandMqtt,
  makeMes,
  type Mes,
  responseOf,
  responseSummary,
  SCOPE,
  startInstance,
  storeFor,
  topicsFor,
  untilJobOrderIs
} from "./Kit.js"

const broker = mosquittoForFile()

const testEngineOptions: Partial<EngineOptions> = { sweepIntervalMs: 50, fallbackIntervalMs: 100, reconcileIntervalMs: 60_000, claimIdleMs: 2_000 }
const INSTANCE = "engine-1"

/**
 * A whole island on MQTT: the job control ingress, and the SFC engine whose station port and
 * station ingress are the MQTT ones. Only the store is shared with the test, through Valkey.
 */
const islandWorld = (prefix: string) =>
  Layer.mergeAll(JobControlIngress(ingressOptions(prefix)), SfcEngineProcesses(testEngineOptions)).pipe(
    Layer.provide(MqttStation({ topics: topicsFor(prefix), instanceId: INSTANCE, source: ISLAND_SOURCE, retryMinMs: 20, retryMaxMs: 200 })),
    Layer.provide(Layer.merge(jobControlLayer(), SfcRuntimeServices)),
    Layer.provide(islandMqtt(broker.url)),
    Layer.provide(storeFor(prefix))
  )

const station = (prefix: string, script: Omit<SimulatedStationOptions, "url" | "topics">) =>
  makeSimulatedStation({ url: broker.url, topics: topicsFor(prefix), ...script })

const ok = (mes: Mes, type: string, data: unknown, extensions: Record<string, string> = {}) =>
  Effect.tap(mes.call(type, data, { extensions }), (reply) =>
    Effect.sync(() => {
      expect(reply.data, `${type}: ${JSON.stringify(reply.data)} ${reply.extensions["mdcserrormessage"] ?? ""}`).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })
    })
  )

const recipeWorkMaster = (id: string, recipe: object) => ({ ID: id, dataschema: RECIPE_SCHEMA_ID, data: recipe })

describe("MQTT station port and station ingress", () => {
  it.live("runs the axle job order end to end: configuration and job order over MQTT, the recipe against a station over MQTT", () => {
    const prefix = randomPrefix("im")
    let torqueChecks = 0
    return Effect.gen(function* () {
      yield* startInstance(islandWorld(prefix))
      const sim = yield* station(prefix, {
        onCommand: (command) => ({ data: { done: command.action }, delayMs: 5 }),
        events: {
          "com.example.station.qa.v1": () => ({ passed: true }),
          // The first torque check fails, the second passes: one rework loop.
          "com.example.station.torque.v1": () => ({ torque_ok: ++torqueChecks > 1, torque: 84 + torqueChecks })
        }
      })
      const mes = yield* makeMes(broker.url, prefix)

      // The station configuration the job order references, as an MES would send it.
      yield* ok(mes, ConfigEventTypes.equipment, { ID: "station-7" })
      yield* ok(mes, ConfigEventTypes.materialclass, { MaterialClassID: "axle" })
      yield* ok(mes, ConfigEventTypes.materialdefinition, { MaterialDefinitionID: "axle-front-a2" })
      yield* ok(mes, ConfigEventTypes.personnel, { ID: "operator-12" })
      yield* ok(mes, ConfigEventTypes.physicalasset, { ID: "nutrunner-3" })
      yield* ok(mes, ConfigEventTypes.workmaster, fixture("work-master-axle.json"))
      const jobOrder = fixture("job-order.json")
      yield* ok(mes, MethodEventTypes.StoreAndStart, { JobOrder: jobOrder })

      expect(yield* untilJobOrderIs("jo-axle-0001", "Ended_Completed", 20_000)).toBe("Ended_Completed")
      const response = yield* eventually(responseOf("jo-axle-0001"))
      expect(response).toMatchObject({ JobResponseID: "jo-axle-0001-response", JobOrderID: "jo-axle-0001", EquipmentActuals: [{ ID: "station-7" }] })
      expect(responseSummary(response)).toMatchObject({ state: "Ended_Completed", data: { verify: { torque_ok: true, torque: 86 } } })

      // The commands as they went over the wire.
      const actions = sim.commands.map((c) => c.action)
      expect(actions.filter((a) => a === "position")).toHaveLength(1)
      expect(actions.filter((a) => a === "tighten")).toHaveLength(1)
      expect(actions.filter((a) => a === "retighten")).toHaveLength(1)
      const position = sim.commands.find((c) => c.action === "position")!
      expect(position).toMatchObject({ scope: SCOPE, type: "com.example.station.position.v1", jobId: "jo-axle-0001", parameters: { slot: 3 } })
      expect(position.responseTopic).toBe(`${prefix}/replies/${INSTANCE}`)
      expect(isUuid(position.correlationId ?? "")).toBe(true)
      expect(position.event.source).toBe(ISLAND_SOURCE)

      // And the MES reads the result the way it would.
      const query = yield* ok(mes, QueryEventTypes.RequestJobResponseByJobOrderID, { JobOrderID: "jo-axle-0001" })
      expect(query.data).toEqual({ ReturnStatus: 1, JobOrderID: "jo-axle-0001", JobResponse: response })
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("routes a station event without a job id by type, and a failed reply fails the job", () => {
    const prefix = randomPrefix("im")
    return Effect.gen(function* () {
      yield* startInstance(islandWorld(prefix))
      const sim = yield* station(prefix, {
        onCommand: (command) => (command.type === "com.example.drill.v1" ? { error: "spindle jammed" } : { data: { ok: true } })
      })
      const mes = yield* makeMes(broker.url, prefix)
      yield* ok(
        mes,
        ConfigEventTypes.workmaster,
        recipeWorkMaster("wm-wait-work", {
          Steps: [{ Name: "Wait", Initial: true }, { Name: "Work" }],
          Transitions: [{ Source: "Wait", Target: "Work", Condition: "ready" }],
          Actions: [
            { Name: "await", Step: "Wait", Qualifier: "N", Interaction: "pull_event", TypeId: "com.example.ready.v1", TimeoutSeconds: 30 },
            { Name: "work", Step: "Work", Qualifier: "N", Interaction: "push_command", TypeId: "com.example.work.v1", TimeoutSeconds: 30 }
          ]
        })
      )
      yield* ok(
        mes,
        ConfigEventTypes.workmaster,
        recipeWorkMaster("wm-drill", {
          Steps: [{ Name: "Drill", Initial: true }],
          Transitions: [],
          Actions: [{ Name: "drill", Step: "Drill", Qualifier: "N", Interaction: "push_command", TypeId: "com.example.drill.v1", TimeoutSeconds: 30 }]
        })
      )
      yield* ok(mes, MethodEventTypes.StoreAndStart, { JobOrder: { JobOrderID: "jo-wait", WorkMasterID: [{ ID: "wm-wait-work" }] } })
      yield* ok(mes, MethodEventTypes.StoreAndStart, { JobOrder: { JobOrderID: "jo-drill", WorkMasterID: [{ ID: "wm-drill" }] } })

      // The station emits `ready` without naming a job: it goes to the job that waits for it.
      const states = yield* SfcStateDao
      yield* eventually(Effect.map(states.waiting(SCOPE, "com.example.ready.v1"), (jobs) => (jobs.some((j) => j.jobId === "jo-wait") ? true : undefined)))
      yield* sim.emit(SCOPE, "com.example.ready.v1", { ready: true })
      expect(yield* untilJobOrderIs("jo-wait", "Ended_Completed", 20_000)).toBe("Ended_Completed")
      expect(responseSummary(yield* eventually(responseOf("jo-wait"))).data["await"]).toEqual({ ready: true })

      // The drill reply carries mdcserrorkind / mdcserrormessage: the action, and the job, fail.
      expect(yield* untilJobOrderIs("jo-drill", "Aborted", 20_000)).toBe("Aborted")
      const failed = responseSummary(yield* eventually(responseOf("jo-drill")))
      expect(failed.state).toBe("Aborted")
      expect(failed.error).toContain("spindle jammed")
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("routes a pull event by the correlation key in its CloudEvent extension to the job whose job order names it", () => {
    const prefix = randomPrefix("im")
    const LOT = "com.example.lot.v1"
    return Effect.gen(function* () {
      yield* startInstance(islandWorld(prefix))
      const sim = yield* station(prefix, {})
      const mes = yield* makeMes(broker.url, prefix)
      yield* ok(mes, ConfigEventTypes.workmaster, {
        ID: "wm-lot",
        dataschema: RECIPE_SCHEMA_ID_V1_1,
        data: {
          Steps: [{ Name: "Scan", Initial: true }],
          Transitions: [],
          Actions: [
            {
              Name: "scan", Step: "Scan", Qualifier: "N", Interaction: "pull_event", TypeId: LOT, TimeoutSeconds: 30,
              CorrelationKey: { Attribute: "lotid" }, Matches: "order.MaterialRequirements.0.MaterialLotID"
            }
          ]
        }
      })
      for (const [id, lot] of [["jo-lot-1", "L-1"], ["jo-lot-2", "L-2"]] as const) {
        yield* ok(mes, MethodEventTypes.StoreAndStart, { JobOrder: { JobOrderID: id, WorkMasterID: [{ ID: "wm-lot" }], MaterialRequirements: [{ MaterialLotID: lot }] } })
      }
      const states = yield* SfcStateDao
      const waitsFor = (lot: string) => states.keyedWaiting(SCOPE, { typeId: LOT, key: { place: "attribute.lotid", value: lot } }, 1)
      yield* eventually(Effect.map(Effect.all([waitsFor("L-1"), waitsFor("L-2")]), ([one, two]) => (one.length > 0 && two.length > 0 ? true : undefined)))
      // The job that started last gets its event first: by key, not by arrival.
      yield* sim.emit(SCOPE, LOT, { lot: "L-2" }, { extensions: { lotid: "L-2" } })
      expect(yield* untilJobOrderIs("jo-lot-2", "Ended_Completed", 20_000)).toBe("Ended_Completed")
      yield* sim.emit(SCOPE, LOT, { lot: "L-1" }, { extensions: { lotid: "L-1" } })
      expect(yield* untilJobOrderIs("jo-lot-1", "Ended_Completed", 20_000)).toBe("Ended_Completed")
      for (const [id, lot] of [["jo-lot-1", "L-1"], ["jo-lot-2", "L-2"]] as const) {
        expect(responseSummary(yield* eventually(responseOf(id))).data["scan"]).toEqual({ lot })
      }
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("a reply without a subject finds its scope through the correlation id; a redelivered reply is harmless", () => {
    const prefix = randomPrefix("im")
    return Effect.gen(function* () {
      yield* startInstance(islandWorld(prefix))
      // A bare station: it answers without a subject, and sends its reply twice.
      const bare = yield* makeMqttConnection({ url: broker.url, clientIdBase: "bare-station" })
      const inbox = yield* bare.subscribe(Result.getOrThrow(stationCommandFilter(topicsFor(prefix))))
      yield* inbox.pipe(
        Stream.runForEach((command) => {
          const reply = makeCloudEvent({ source: "urn:bare-station", type: "com.example.ping.v1.reply", data: { pong: 1 } })
          return bare.reply(command, reply).pipe(Effect.andThen(bare.reply(command, reply)), Effect.andThen(command.ack))
        }),
        Effect.forkScoped
      )
      const mes = yield* makeMes(broker.url, prefix)
      yield* ok(
        mes,
        ConfigEventTypes.workmaster,
        recipeWorkMaster("wm-ping", {
          Steps: [{ Name: "Ping", Initial: true }],
          Transitions: [],
          Actions: [{ Name: "ping", Step: "Ping", Qualifier: "N", Interaction: "push_command", TypeId: "com.example.ping.v1", TimeoutSeconds: 30 }]
        })
      )
      yield* ok(mes, MethodEventTypes.StoreAndStart, { JobOrder: { JobOrderID: "jo-ping", WorkMasterID: [{ ID: "wm-ping" }] } })
      expect(yield* untilJobOrderIs("jo-ping", "Ended_Completed", 20_000)).toBe("Ended_Completed")
      expect(responseSummary(yield* eventually(responseOf("jo-ping"))).data["ping"]).toEqual({ pong: 1 })
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })
})
