import { Context, Duration, Effect, Exit, Layer, Option, Schedule, Scope } from "effect"
import { MqttConnection } from "@microdcs/cloudevents-mqtt"
import { StorageStart } from "@microdcs/execution-log"
import { jobControlLayer } from "@microdcs/job-control"
import { Publisher, PublisherLive } from "@microdcs/publisher"
import { SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc-runtime"
import { storeLayer } from "@microdcs/store"
import type { DaemonConfig } from "./DaemonConfig.js"
import { withEmbeddedServers } from "./Embedded.js"
import { executionLogLayer } from "./ExecutionLogRole.js"
import { serveHttp } from "./Http.js"
import { type IslandEndpoints, makeIslandEndpoints } from "./HttpContext.js"
import { accountedConnection } from "./MessageAccounting.js"
import { makeMetrics, type MessageKind, type Metrics } from "./Metrics.js"
import { islandHistory } from "./IslandHistory.js"
import { HistorySource } from "./HistorySource.js"
import { intakeProbeTopic, mqttNamesProblem } from "./MqttNameChecks.js"
import { isTransient, refusalOf, StartRefused } from "./StartFailure.js"
import { journaledMqttStation, journalingJobControlIngress, journalRunning, journalServices } from "./IslandJournal.js"
import { JournalCounterSource } from "./JournalCounterSource.js"
import { JournalRecordsInFlight } from "./JournalRecordsInFlight.js"
import { triggerAnnouncer, triggerEditRelay, triggersRole } from "./Triggers.js"
import { indexUpgradeRole } from "./IndexUpgrade.js"

type Topics = { readonly prefix: string; readonly discriminator: string | undefined; readonly wildcardLevels: number }

const topicsOf = (config: DaemonConfig): Topics => ({ prefix: config.mqtt.topicPrefix, discriminator: config.mqtt.discriminator, wildcardLevels: config.mqtt.wildcardLevels })

/** The job control role: MES methods, queries and configuration over MQTT, counted by outcome. */
const jobControlRole = (config: DaemonConfig, metrics: Metrics, topics: Topics) => {
  // Job control acknowledges refused requests like processed ones: those two outcomes are
  // counted at the acknowledgement, by the reply that went out; the worker reports the rest.
  const jobControlConnection = Layer.effect(
    MqttConnection,
    Effect.map(MqttConnection, (connection) =>
      accountedConnection(connection, (type, outcome, seconds, reason) => metrics.recordMessage("jobcontrol", type, outcome, seconds, reason))
    )
  )
  const jobControlOutcomes = {
    onOutcome: (type: string, outcome: string, seconds: number) => {
      if (outcome !== "ok") metrics.recordMessage("jobcontrol", type, outcome, seconds)
    }
  }
  return journalingJobControlIngress(metrics, {
    topics,
    sharedGroup: config.mqtt.sharedGroup,
    source: config.source,
    instanceId: config.instanceId,
    leaseMs: config.dedupeLeaseMs,
    doneTtlMs: config.dedupeDoneTtlMs,
    shutdownGraceMs: config.shutdownGraceMs,
    ...jobControlOutcomes,
    onPublishDropped: (what: string, reason: string) => metrics.recordPublishDropped(what, reason)
  }).pipe(
    Layer.provide(jobControlLayer({ defaultAcceptanceLimit: config.defaultAcceptanceLimit, retentionMs: config.retentionMs, recipeDigests: config.recipeDigests })),
    Layer.provide(jobControlConnection)
  )
}

/** The engine and sweep roles, with the station port over MQTT. */
const engineRole = (config: DaemonConfig, metrics: Metrics, topics: Topics) => {
  // Every message the two MQTT workers handle is counted and timed by type and outcome.
  const observed = (kind: MessageKind) => ({ onOutcome: (type: string, outcome: string, seconds: number) => metrics.recordMessage(kind, type, outcome, seconds) })
  const station = { topics, instanceId: config.instanceId, sharedGroup: config.mqtt.sharedGroup, source: config.source, shutdownGraceMs: config.shutdownGraceMs, ...observed("station") }
  return SfcEngineProcesses({ ...config.engine, shutdownGraceMs: config.shutdownGraceMs }, { engine: config.roles.has("engine"), sweep: config.roles.has("sweep") }).pipe(
    Layer.provide(journaledMqttStation(metrics, station)),
    // Recipe conditions read the journal's counters (`counter.nok_torque_1h`) through the runtime.
    Layer.provideMerge(SfcRuntimeServices.pipe(Layer.provide(JournalCounterSource)))
  )
}

const publisherRole = (config: DaemonConfig) =>
  PublisherLive({
    prefix: config.mqtt.topicPrefix,
    discriminator: config.mqtt.discriminator,
    source: config.source,
    instanceId: config.instanceId,
    messageExpirySeconds: config.messageExpirySeconds,
    stateIndexIntervalMs: config.stateIndexIntervalMs,
    ...definedOnly({ maxPayloadBytes: config.mqtt.limits.maxPayloadBytes })
  })

/**
 * The roles of one daemon as layers over one store and one MQTT connection. Each role is on by
 * default and can be switched off; instances share the island's work through consumer groups
 * (engine), shared subscriptions (job control) and a lease (publisher).
 */
const roleLayers = (config: DaemonConfig, metrics: Metrics) => {
  const topics = topicsOf(config)
  const jobControl = config.roles.has("job-control") ? jobControlRole(config, metrics, topics) : Layer.empty
  const runsEngine = config.roles.has("engine") || config.roles.has("sweep")
  const engine = runsEngine ? engineRole(config, metrics, topics) : Layer.empty
  const publisher = config.roles.has("publisher") ? publisherRole(config) : Layer.empty
  // The journal serves every role: job control takes its configuration events, the engine journals station events.
  // Triggers run with job control; the announcer of trigger edits goes to every role (job control's
  // processor takes it) and to the relay of the edits nobody announced, which every daemon runs.
  // Every daemon may run the index upgrade; its lease lets one walk.
  const upgrade = indexUpgradeRole(config)
  return Layer.mergeAll(jobControl, engine, publisher, journalRunning(config, metrics), executionLogLayer(config), triggersRole(config, metrics), triggerEditRelay(config), upgrade).pipe(
    Layer.provide(triggerAnnouncer(config, metrics)),
    // One registry of journal records in flight for the station ingress and the counter source.
    Layer.provideMerge(Layer.merge(journalServices(config), JournalRecordsInFlight.layer))
  )
}

/** The settings that are set: an unset limit leaves the MQTT package's default in place. */
const definedOnly = <T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } =>
  Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> }

/**
 * Builds the layer in the current scope, trying again (capped backoff) while it fails for a
 * server that is not reachable yet: a daemon started before its Valkey or broker waits for them,
 * not ready, instead of exiting. Each attempt has a scope of its own, closed when it fails, so a
 * half-built attempt leaves nothing behind; the one that succeeds closes with the current scope.
 * The waiting stays interruptible: a SIGTERM before the servers came up still stops the daemon.
 */
const buildWhenReachable = <ROut, E, RIn>(layer: Layer.Layer<ROut, E, RIn>) => {
  const attempt = Effect.gen(function* () {
    const own = yield* Scope.make("sequential")
    const context = yield* Layer.buildWithScope(layer, own).pipe(Effect.onExit((exit) => (Exit.isFailure(exit) ? Scope.close(own, exit) : Effect.void)))
    return { own, context }
  })
  const retried = attempt.pipe(
    // A server that answered "no" will answer "no" again: no retry, the daemon ends with the reason.
    Effect.mapError((error) => refusalOf(error) ?? error),
    Effect.tapError((error) =>
      error instanceof StartRefused ? Effect.logError("island not started: a server refused it").pipe(Effect.annotateLogs({ server: error.server, reason: error.message })) : Effect.void
    ),
    Effect.tapError((error) =>
      isTransient(error)
        ? Effect.logWarning("island not started: a server is not reachable yet; trying again").pipe(
            Effect.annotateLogs({ error: `${(error as { _tag: string })._tag}: ${String((error as { message?: unknown }).message)}` })
          )
        : Effect.void
    ),
    Effect.retry({
      while: isTransient,
      schedule: Schedule.min([Schedule.exponential(Duration.millis(200)), Schedule.spaced(Duration.seconds(5))])
    })
  )
  return Effect.uninterruptibleMask((restore) =>
    restore(retried).pipe(
      Effect.tap(({ own }) => Effect.addFinalizer((exit) => Scope.close(own, exit))),
      Effect.map(({ context }) => context)
    )
  )
}

/** The island's MQTT connection, with the limits that are set (the others stay the MQTT package's defaults). */
const mqttLayer = (config: DaemonConfig) =>
  MqttConnection.layer({
    url: config.mqtt.url!,
    // A stable client id and a persistent session: messages not yet acknowledged when this
    // instance stops are redelivered to it when it comes back within the session expiry.
    clientId: `island-${config.instanceId}`,
    clean: false,
    sessionExpirySeconds: config.mqtt.sessionExpirySeconds,
    username: config.mqtt.username,
    password: config.mqtt.password,
    tlsCa: config.mqtt.tls.ca,
    tlsCert: config.mqtt.tls.cert,
    tlsKey: config.mqtt.tls.key,
    ...definedOnly(config.mqtt.limits),
    // The broker may stop delivering without a word (mosquitto after messages over our packet
    // limit): the connection probes its own intake, reports a stall and reconnects.
    ...definedOnly({ intakeProbeTopic: intakeProbeTopic(config), intakeProbeMs: config.mqtt.intakeProbeMs })
  })

/**
 * Starts the island in the current scope and returns once it is serving: the embedded servers
 * (when no URLs are set), the HTTP server, then the store, the MQTT connection and the roles
 * (waiting for Valkey and the broker when they are not up yet). Closing the scope stops
 * everything in reverse order: `/readyz` turns 503 first, the roles drain, the connections
 * close, the HTTP server closes last.
 */
export const startIsland = (configured: DaemonConfig) =>
  Effect.gen(function* () {
    const names = mqttNamesProblem(configured)
    if (names !== undefined) return yield* Effect.fail(names)
    const config = yield* withEmbeddedServers(configured)
    yield* Effect.logInfo("island daemon starting").pipe(
      Effect.annotateLogs({ instanceId: config.instanceId, roles: [...config.roles].join(","), embeddedValkey: config.embeddedValkey })
    )
    const metrics = makeMetrics()
    const history = islandHistory(config, metrics)
    let endpoints: IslandEndpoints | undefined
    const http = yield* serveHttp({ host: config.httpHost, port: config.httpPort, metrics, endpoints: () => endpoints, users: config.httpUsers })

    const store = storeLayer({ ...config.valkey, connectionName: `island-${config.instanceId}` })
    const mqtt = mqttLayer(config)
    // One after the other, each waiting for its server: an MQTT connection attempt interrupted
    // because the store failed beside it would linger and fight its successor over the client id.
    const infrastructure = Context.merge(yield* buildWhenReachable(store), yield* buildWhenReachable(mqtt))
    const context = yield* buildWhenReachable(roleLayers(config, metrics).pipe(Layer.provideMerge(Layer.succeedContext(infrastructure))))
    const started = yield* Effect.gen(function* () {
      yield* metrics.followStore
      const historySource = yield* history.follow
      const publisher = yield* Effect.serviceOption(Publisher)
      const island = yield* Effect.provideService(makeIslandEndpoints(config), HistorySource, historySource)
      yield* Effect.acquireRelease(
        Effect.sync(() => void (endpoints = island)),
        () => Effect.sync(() => void (endpoints = undefined))
      )
      yield* Effect.logInfo("island daemon ready").pipe(
        Effect.annotateLogs({ http: `${http.host}:${http.port}`, publisher: publisher._tag === "Some" ? "on" : "off" })
      )
      return { http, config, context }
    }).pipe(Effect.provide(context))
    return started
  })

/**
 * Runs the island until interrupted, or until its storage database refused to start (which the
 * island waited for in the background); everything it started is stopped in reverse order.
 */
export const runIsland = (config: DaemonConfig) =>
  Effect.flatMap(startIsland(config), ({ context }) =>
    Option.match(Context.getOption(context, StorageStart), { onNone: () => Effect.never, onSome: (start) => start.failure })
  )
