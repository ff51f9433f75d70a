import { Effect, Layer } from "effect"
import { MqttConnection } from "@microdcs/cloudevents-mqtt"
import { jobControlLayer } from "@microdcs/job-control"
import { JobControlIngress, MqttStation } from "@microdcs/island-mqtt"
import { Publisher, PublisherLive } from "@microdcs/publisher"
import { SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc"
import { storeLayer, Valkey } from "@microdcs/store"
import type { DaemonConfig } from "./DaemonConfig.js"
import { withEmbeddedServers } from "./Embedded.js"
import { serveHttp } from "./Http.js"
import { makeMetrics } from "./Metrics.js"

/**
 * The roles of one daemon as layers over one store and one MQTT connection. Each role is on by
 * default and can be switched off; instances share the island's work through consumer groups
 * (engine), shared subscriptions (job control) and a lease (publisher).
 */
const roleLayers = (config: DaemonConfig) => {
  const topics = { prefix: config.mqtt.topicPrefix, discriminator: config.mqtt.discriminator, wildcardLevels: config.mqtt.wildcardLevels }
  const grace = { shutdownGraceMs: config.shutdownGraceMs }
  const jobControl = config.roles.has("job-control")
    ? JobControlIngress({ topics, sharedGroup: config.mqtt.sharedGroup, source: config.source, ...grace }).pipe(
        Layer.provide(jobControlLayer({ defaultAcceptanceLimit: config.defaultAcceptanceLimit, retentionMs: config.retentionMs }))
      )
    : Layer.empty
  const runsEngine = config.roles.has("engine") || config.roles.has("sweep")
  const engine = runsEngine
    ? SfcEngineProcesses({ ...config.engine, shutdownGraceMs: config.shutdownGraceMs }, { engine: config.roles.has("engine"), sweep: config.roles.has("sweep") }).pipe(
        Layer.provide(MqttStation({ topics, instanceId: config.instanceId, source: config.source, ...grace })),
        Layer.provideMerge(SfcRuntimeServices)
      )
    : Layer.empty
  const publisher = config.roles.has("publisher")
    ? PublisherLive({
        prefix: config.mqtt.topicPrefix,
        discriminator: config.mqtt.discriminator,
        source: config.source,
        instanceId: config.instanceId,
        messageExpirySeconds: config.messageExpirySeconds
      })
    : Layer.empty
  return Layer.mergeAll(jobControl, engine, publisher)
}

/**
 * Starts the island in the current scope and returns once it is serving: the embedded servers
 * (when no URLs are set), the store, the MQTT connection, the roles and the HTTP server. Closing
 * the scope stops everything in reverse order.
 */
export const startIsland = (configured: DaemonConfig) =>
  Effect.gen(function* () {
    const config = yield* withEmbeddedServers(configured)
    yield* Effect.logInfo("island daemon starting").pipe(
      Effect.annotateLogs({ instanceId: config.instanceId, roles: [...config.roles].join(","), embeddedValkey: config.embeddedValkey })
    )
    const store = storeLayer({ ...config.valkey, connectionName: `island-${config.instanceId}` })
    const mqtt = MqttConnection.layer({
      url: config.mqtt.url!,
      // A stable client id and a persistent session: messages not yet acknowledged when this
      // instance stops are redelivered to it when it comes back.
      clientId: `island-${config.instanceId}`,
      clean: false
    })
    const infrastructure = Layer.merge(store, mqtt)
    const context = yield* Layer.build(roleLayers(config).pipe(Layer.provideMerge(infrastructure)))
    const started = yield* Effect.gen(function* () {
      const metrics = yield* makeMetrics
      const valkey = yield* Valkey
      const connection = yield* MqttConnection
      const publisher = yield* Effect.serviceOption(Publisher)
      const readiness = Effect.gen(function* () {
        const valkeyUp = yield* valkey.command("ping", (c) => c.ping()).pipe(
          Effect.as(true),
          Effect.timeout("1 second"),
          Effect.catchAll(() => Effect.succeed(false))
        )
        const mqttUp = (yield* connection.status) === "connected"
        const subscribed = !(config.roles.has("job-control") || config.roles.has("engine")) || (yield* connection.subscriptions).length > 0
        return { valkey: valkeyUp, mqtt: mqttUp, subscribed, roles: true }
      })
      const http = yield* serveHttp({ host: config.httpHost, port: config.httpPort, metrics, readiness })
      yield* Effect.logInfo("island daemon ready").pipe(
        Effect.annotateLogs({ http: `${http.host}:${http.port}`, publisher: publisher._tag === "Some" ? "on" : "off" })
      )
      return { http, config, context }
    }).pipe(Effect.provide(context))
    return started
  })

/** Runs the island until interrupted; everything it started is stopped in reverse order. */
export const runIsland = (config: DaemonConfig) => Effect.zipRight(startIsland(config), Effect.never)
