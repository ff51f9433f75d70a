import { Effect, Layer, LogLevel, Option, References, Result, Stream } from "effect"
import { type CloudEvent, type IncomingMessage, MqttConnection, scopeOf, sharedFilter } from "@microdcs/cloudevents-mqtt"
import { Executions, SfcEvents, type StationEvent } from "@microdcs/sfc-runtime"
import { SfcCorrelations } from "@microdcs/store"
import { runWorker, type WorkerOptions } from "./MessageWorker.js"
import { MqttStationPort, type MqttStationOptions, stationReplyTopic } from "./MqttStationPort.js"
import { scopeOfStationTopic, stationEventsFilter } from "@microdcs/cloudevents-mqtt"

export interface StationIngressOptions extends MqttStationOptions, WorkerOptions {
  /**
   * Told about every station event and reply that names a scope, before the engine ingests it
   * (the island daemon journals it there). An effect it returns is awaited after the ingest and
   * before the acknowledgement: a hook that only starts its work (the daemon's journal record)
   * lets it overlap the ingest instead of delaying it, and the message still counts as taken only
   * once that work is done. It cannot fail or hold the message: whatever goes wrong in it is its
   * own to log.
   */
  readonly onStationEvent?: ((event: CloudEvent, scope: string) => Effect.Effect<Effect.Effect<void> | void>) | undefined
}

/**
 * Why a station reports a failed action: the `mdcserrorkind` / `mdcserrormessage` extensions
 * (what an island-style error reply carries) or an `error` field in the data.
 */
export const stationFailure = (event: CloudEvent): string | undefined => {
  const kind = event.extensions["mdcserrorkind"]
  const message = event.extensions["mdcserrormessage"]
  if (kind !== undefined || message !== undefined) return [kind, message].filter((s) => s !== undefined).join(": ")
  const data = event.data
  if (typeof data !== "object" || data === null || !("error" in data)) return undefined
  const error: unknown = data.error
  if (error === undefined || error === null || error === false) return undefined
  return typeof error === "string" ? error : JSON.stringify(error)
}

/** What the station ingress's functions share. */
interface StationIngressDeps {
  readonly options: StationIngressOptions
  readonly events: SfcEvents["Service"]
  readonly correlations: SfcCorrelations["Service"]
  readonly executions: Executions["Service"]
}

/** The scope of the job a correlation id belongs to (for replies that carry no subject). */
const scopeOfCorrelation = (deps: StationIngressDeps, correlationId: string) =>
  Effect.gen(function* () {
    const jobId = yield* deps.correlations.jobOf(correlationId)
    if (Option.isNone(jobId)) return undefined
    return Option.getOrUndefined(yield* deps.executions.load(jobId.value))?.state.scope
  })

/** Every attribute of the event by name, extensions among them: what a correlation key's `Attribute` reads. */
const attributesOf = (event: CloudEvent): Readonly<Record<string, string>> => {
  const attributes: Record<string, string> = { ...event.extensions, id: event.id, source: event.source, type: event.type }
  for (const name of ["subject", "time", "dataschema", "datacontenttype"] as const) {
    const value = event[name]
    if (value !== undefined) attributes[name] = value
  }
  return attributes
}

/** The event as the engine ingests it. */
const stationEventOf = (kind: "reply" | "event", event: CloudEvent, scope: string, correlationId: string | undefined): StationEvent => {
  const error = stationFailure(event)
  const jobId = kind === "event" ? event.extensions["jobid"] : undefined
  return {
    scope,
    source: event.source,
    id: event.id,
    type: event.type,
    ...(correlationId !== undefined ? { correlationId } : {}),
    ...(jobId !== undefined ? { jobId } : {}),
    ...(kind === "event" ? { attributes: attributesOf(event) } : {}),
    ...(event.data !== undefined ? { data: event.data } : {}),
    ...(error !== undefined ? { error } : {})
  }
}

const dropped = (what: string, message: IncomingMessage, annotations: Record<string, unknown>) =>
  Effect.logWarning(what).pipe(Effect.annotateLogs({ topic: message.topic, ...annotations }))

const handle = (deps: StationIngressDeps, kind: "reply" | "event", message: IncomingMessage) =>
  Effect.gen(function* () {
    if (Result.isFailure(message.decoded)) {
      const { kind: problem, message: reason } = message.decoded.failure
      return yield* dropped("station message is not a CloudEvent we accept; dropped", message, { problem, reason })
    }
    const event = message.decoded.success
    const correlationId = kind === "reply" ? event.extensions["correlationid"] : undefined
    const scope =
      scopeOf(event) ??
      (kind === "event" ? scopeOfStationTopic(deps.options.topics, message.topic) : correlationId !== undefined ? yield* scopeOfCorrelation(deps, correlationId) : undefined)
    if (scope === undefined || scope.length === 0) return yield* dropped("station message names no scope; dropped", message, { id: event.id })
    if (kind === "reply" && correlationId === undefined) return yield* dropped("station reply without correlation data; dropped", message, { id: event.id })
    const input = stationEventOf(kind, event, scope, correlationId)
    const started = deps.options.onStationEvent === undefined ? undefined : yield* deps.options.onStationEvent(event, scope)
    const after = Effect.isEffect(started) ? started : Effect.void
    // Awaited whatever the ingest's outcome: a retry then starts the hook again, not beside it.
    const outcome = yield* deps.events.ingest(input).pipe(Effect.ensuring(after))
    // Every station message: the line (and its annotations, ~12 µs) only when debug lines are wanted.
    yield* References.MinimumLogLevel.use((minimum) =>
      LogLevel.isLessThan("Debug", minimum)
        ? Effect.void
        : Effect.logDebug("station message ingested").pipe(Effect.annotateLogs({ topic: message.topic, id: event.id, outcome: outcome._tag }))
    )
  }).pipe(
    // A value the store refuses (a bad scope, a result over the size limit) will not get
    // better by trying again: the station sent it so.
    Effect.catchTag("InvalidInput", (error) =>
      Effect.logWarning("station message refused by the store; dropped").pipe(
        Effect.annotateLogs({ topic: message.topic, field: error.field, error: error.message })
      )
    )
  )

/**
 * Feeds station replies and events into the SFC engine:
 * - replies on the reply topic ({@link stationReplyTopic}) are routed by their correlation id;
 * - events on `P/S/+[/D]/events` by the `jobid` extension, else by the correlation key they carry
 *   (an attribute or a data field, as the waiting action names it) to the job that expects it,
 *   else by type to the job that has waited longest.
 * A message is acknowledged after `SfcEvents.ingest`, which is idempotent through the
 * applied-event record, so a redelivery is harmless. The scope is the subject up to the first
 * `/`; without a subject, the topic's scope level (events) or the job the correlation id names
 * (replies). A message that cannot be ingested as sent is logged and acknowledged.
 *
 * Replies and events sent while an instance restarts are not lost: both subscriptions stay in
 * the MQTT session, so a persistent session (a lone instance) gets them when it is back. With a
 * shared group (and session expiry 0) the replies go to the group's reply topic, shared by the
 * live members, and every member gets every event.
 */
export const runStationIngress = (options: StationIngressOptions) =>
  Effect.gen(function* () {
    const mqtt = yield* MqttConnection
    const deps: StationIngressDeps = { options, events: yield* SfcEvents, correlations: yield* SfcCorrelations, executions: yield* Executions }
    const replyTopic = yield* Effect.fromResult(stationReplyTopic(options))
    const replyFilter = options.sharedGroup === undefined ? replyTopic : yield* Effect.fromResult(sharedFilter(options.sharedGroup, replyTopic))
    // Kept in the session (no UNSUBSCRIBE at shutdown), as job control's: a graceful restart
    // would otherwise tell the broker to drop what arrives while this instance is away.
    const replies = yield* mqtt.subscribe(replyFilter, { qos: 1, keepInSession: true })
    // Not shared: every instance ingests every event (the applied-event record makes the extra
    // copies no-ops). A station emits a pull event once; a share handed to a member that then
    // crashes would be lost with its session, and no resend brings it back.
    const stationEvents = yield* mqtt.subscribe(yield* Effect.fromResult(stationEventsFilter(options.topics)), { qos: 1, keepInSession: true })
    yield* runWorker(
      "station ingress",
      Stream.merge(replies, stationEvents),
      (message) => handle(deps, message.topic === replyTopic ? "reply" : "event", message),
      options
    )
  })

/** {@link runStationIngress} as a layer; it needs `MqttConnection`, `SfcEvents`, `Executions` and `SfcCorrelations`. */
export const StationIngress = (options: StationIngressOptions) => Layer.effectDiscard(runStationIngress(options))

/**
 * The station side of an engine instance over MQTT: `StationPort` for push commands and the
 * ingress for replies and events. The engine needs the port, so it starts only once the
 * ingress is subscribed: no reply can come back before its subscription exists.
 */
export const MqttStation = (options: StationIngressOptions) => Layer.merge(MqttStationPort(options), StationIngress(options))
