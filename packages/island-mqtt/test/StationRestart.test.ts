import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Result, Layer, Stream } from "effect"
import { type IncomingMessage, makeCloudEvent, makeMqttConnection, type MqttOptions } from "@microdcs/cloudevents-mqtt"
import { type EngineOptions, SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc-runtime"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { randomPrefix } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import { putJobOrder, putWorkMaster } from "@microdcs/testkit"
import { MqttStation, stationCommandFilter } from "@microdcs/island-mqtt"
import { eventually, ISLAND_SOURCE, islandMqtt, responseOf, responseSummary, SCOPE, startInstance, storeFor, topicsFor, untilJobOrderIs } from "./Kit.js"

/**
 * Station replies sent while the instance that sent the command restarts:
 * a lone instance gets them from its persistent session when it is back; with a shared
 * group a live member gets them at once.
 */

const broker = mosquittoForFile()

const engineOptions: Partial<EngineOptions> = { sweepIntervalMs: 50, fallbackIntervalMs: 100, reconcileIntervalMs: 60_000, claimIdleMs: 2_000 }

/** One engine instance with its own store and MQTT connections, as a daemon has. */
const engineInstance = (prefix: string, instanceId: string, mqtt: Partial<MqttOptions>, sharedGroup?: string) =>
  SfcEngineProcesses({ ...engineOptions, shutdownGraceMs: 2_000 }).pipe(
    Layer.provide(
      MqttStation({ topics: topicsFor(prefix), instanceId, sharedGroup, source: ISLAND_SOURCE, retryMinMs: 20, retryMaxMs: 200, shutdownGraceMs: 2_000 })
    ),
    Layer.provide(SfcRuntimeServices),
    Layer.provide(islandMqtt(broker.url, mqtt)),
    Layer.provide(storeFor(prefix))
  )

/** A job order in AllowedToStart whose recipe sends one command; its long timeout rules out a resend. */
const submitPingJob = (jobId: string) =>
  Effect.gen(function* () {
    const recipe = {
      Steps: [{ Name: "Ping", Initial: true }],
      Transitions: [],
      Actions: [{ Name: "ping", Step: "Ping", Qualifier: "N", Interaction: "push_command", TypeId: "com.example.ping.v1", TimeoutSeconds: 120 }]
    }
    const workMaster = { ID: `wm-${jobId}`, dataschema: RECIPE_SCHEMA_ID, data: recipe }
    yield* putWorkMaster(SCOPE, workMaster)
    yield* putJobOrder(SCOPE, { JobOrderID: jobId, WorkMasterID: [{ ID: workMaster.ID }] })
  })

/** A station that keeps every command it receives and answers only when the test says so. */
const makeQuietStation = (prefix: string) =>
  Effect.gen(function* () {
    const connection = yield* makeMqttConnection({ url: broker.url, clientIdBase: "quiet-station", connectTimeoutMs: 5000 })
    const commands: Array<IncomingMessage> = []
    const first = yield* Deferred.make<IncomingMessage>()
    const inbox = yield* connection.subscribe(Result.getOrThrow(stationCommandFilter(topicsFor(prefix))))
    yield* inbox.pipe(
      Stream.runForEach((command) => Effect.sync(() => commands.push(command)).pipe(Effect.andThen(Deferred.succeed(first, command)), Effect.andThen(command.ack))),
      Effect.forkScoped
    )
    const answer = (command: IncomingMessage) =>
      connection.reply(command, makeCloudEvent({ source: "urn:quiet-station", type: "com.example.ping.v1.reply", subject: SCOPE, data: { pong: 1 } }))
    return { commands, first: Deferred.await(first), answer } as const
  })

describe("station replies while the sending instance restarts", () => {
  it.live("a lone instance with a persistent session gets the reply that arrived while it was restarting", () => {
    const prefix = randomPrefix("im-restart")
    const session = { clientId: `island-${prefix}`, clean: false, sessionExpirySeconds: 600 }
    return Effect.gen(function* () {
      const station = yield* makeQuietStation(prefix)
      const first = yield* startInstance(engineInstance(prefix, "engine-1", session))
      yield* submitPingJob("jo-restart")
      const command = yield* station.first
      expect(command.responseTopic).toBe(`${prefix}/replies/engine-1`)

      // Stopped gracefully: the reply is sent while no instance is connected.
      yield* first.stop
      yield* station.answer(command)
      yield* startInstance(engineInstance(prefix, "engine-1", session))

      expect(yield* untilJobOrderIs("jo-restart", "Ended_Completed", 20_000)).toBe("Ended_Completed")
      expect(responseSummary(yield* eventually(responseOf("jo-restart"))).data["ping"]).toEqual({ pong: 1 })
      expect(station.commands).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })

  it.live("with a shared group, the reply to a command whose sender stopped goes to a live instance", () => {
    const prefix = randomPrefix("im-shared")
    const group = `g-${prefix}`
    // As the daemon runs a shared group: persistent-session flags, but a session expiry of 0.
    const session = { clean: false, sessionExpirySeconds: 0 }
    return Effect.gen(function* () {
      const station = yield* makeQuietStation(prefix)
      const sender = yield* startInstance(engineInstance(prefix, "engine-a", session, group))
      yield* submitPingJob("jo-shared")
      const command = yield* station.first
      expect(command.responseTopic).toBe(`${prefix}/replies/${group}`)

      yield* startInstance(engineInstance(prefix, "engine-b", session, group))
      yield* sender.stop
      yield* station.answer(command)

      expect(yield* untilJobOrderIs("jo-shared", "Ended_Completed", 20_000)).toBe("Ended_Completed")
      expect(responseSummary(yield* eventually(responseOf("jo-shared"))).data["ping"]).toEqual({ pong: 1 })
      expect(station.commands).toHaveLength(1)
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })
})
