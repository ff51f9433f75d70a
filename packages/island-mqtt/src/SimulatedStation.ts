import { Effect, Result, FiberSet, Schedule, type Scope, Stream } from "effect"
import {
  type CloudEvent,
  type IncomingMessage,
  type InvalidTopic,
  makeCloudEvent,
  makeErrorReply,
  makeMqttConnection,
  type MqttConnectError,
  type MqttConnectionService,
  type MqttSubscribeError,
  type PublishFailure
} from "@microdcs/cloudevents-mqtt"
import { ScopeRegistry, SfcStateDao } from "@microdcs/store"
import { stationCommandFilter, stationEventsTopic, type StationTopicConfig } from "@microdcs/cloudevents-mqtt"

/** A push command as the simulated station received it. */
export interface StationCommand {
  readonly scope: string
  readonly type: string
  readonly jobId: string | undefined
  readonly action: string | undefined
  readonly correlationId: string | undefined
  readonly parameters: unknown
  /** Where the reply goes: the sending instance's response topic. */
  readonly responseTopic: string | undefined
  readonly event: CloudEvent
}

/** What the station answers to one command; `"silent"` sends nothing (to provoke timeouts). */
export type StationReply = { readonly data?: unknown; readonly error?: string; readonly delayMs?: number } | "silent"

export interface SimulatedStationOptions {
  /** The broker; the station has a connection of its own, like a real one. */
  readonly url: string
  readonly topics: StationTopicConfig
  /** Its CloudEvent `source` (default `urn:microdcs:station:simulated`). */
  readonly source?: string | undefined
  /** Answers push commands; default: an empty result at once. */
  readonly onCommand?: ((command: StationCommand) => StationReply) | undefined
  /** Pull events by type: the data to emit for a job waiting on it (`undefined` = not yet). */
  readonly events?: Readonly<Record<string, (jobId: string, scope: string) => unknown>> | undefined
  /** How often it looks for jobs waiting on its event types (default 20 ms). */
  readonly eventPollMs?: number | undefined
}

export interface SimulatedStation {
  readonly clientId: string
  /** Every command received, in arrival order. */
  readonly commands: ReadonlyArray<StationCommand>
  /** Every event emitted, by the script or through `emit`. */
  readonly emitted: ReadonlyArray<{ readonly scope: string; readonly type: string; readonly jobId: string | undefined }>
  /**
   * Publishes a pull event now; without `jobId` the island routes it by the correlation key it
   * carries (in `extensions` or `data`) or by type to the longest-waiting job.
   */
  readonly emit: (scope: string, type: string, data: unknown, options?: EmitOptions) => Effect.Effect<void, PublishFailure>
}

/** How `emit` sends an event: the job it names (`jobid`), its id, and further extension attributes (a correlation key). */
export interface EmitOptions {
  readonly jobId?: string
  readonly id?: string
  readonly extensions?: Readonly<Record<string, string>>
}

const DEFAULT_SOURCE = "urn:microdcs:station:simulated"

const commandOf = (event: CloudEvent, responseTopic: string | undefined): StationCommand => ({
  scope: event.subject?.split("/", 1)[0] ?? "",
  type: event.type,
  jobId: event.extensions["jobid"],
  action: event.extensions["action"],
  correlationId: event.extensions["correlationid"],
  parameters: event.data,
  responseTopic,
  event
})

/** What the simulated station's functions share: its connection, what it received and emitted, the waits it answered. */
interface StationDeps {
  readonly options: SimulatedStationOptions
  readonly source: string
  readonly mqtt: MqttConnectionService
  readonly commands: Array<StationCommand>
  readonly emitted: Array<{ scope: string; type: string; jobId: string | undefined }>
  // Emits each event type once per wait: the wait's start time tells a new wait from an old one.
  readonly marks: Set<string>
}

const emit = (s: StationDeps, scope: string, type: string, data: unknown, extra: EmitOptions = {}) =>
  Effect.gen(function* () {
    const topic = yield* Effect.fromResult(stationEventsTopic(s.options.topics, scope))
    const extensions = { ...extra.extensions, ...(extra.jobId !== undefined ? { jobid: extra.jobId } : {}) }
    const event = makeCloudEvent({ source: s.source, type, subject: scope, data, id: extra.id, extensions })
    yield* s.mqtt.publish(topic, event, { qos: 1 })
    s.emitted.push({ scope, type, jobId: extra.jobId })
  })

const answer = (s: StationDeps, message: IncomingMessage) =>
  Effect.gen(function* () {
    if (Result.isFailure(message.decoded)) return yield* Effect.logWarning("simulated station: unreadable command").pipe(Effect.annotateLogs({ reason: message.decoded.failure.message }))
    const command = commandOf(message.decoded.success, message.responseTopic)
    s.commands.push(command)
    const reply = s.options.onCommand ? s.options.onCommand(command) : {}
    if (reply === "silent") return
    if (reply.delayMs) yield* Effect.sleep(`${reply.delayMs} millis`)
    const type = `${command.type}.reply`
    const base =
      reply.error === undefined
        ? makeCloudEvent({ source: s.source, type, subject: command.scope })
        : makeErrorReply({ source: s.source, type, subject: command.scope, kind: "StationError", message: reply.error })
    yield* s.mqtt.reply(message, { ...base, datacontenttype: "application/json", data: reply.data ?? {} })
  }).pipe(
    Effect.andThen(message.ack),
    Effect.catchCause((cause) => Effect.logWarning("simulated station could not answer", cause))
  )

type EventProducer = (jobId: string, scope: string) => unknown

/** The waits of every scope and event type, read at once. */
const waitsOf = (states: SfcStateDao["Service"], scopes: ReadonlyArray<string>, types: ReadonlyArray<readonly [string, EventProducer]>) =>
  Effect.forEach(
    scopes,
    (scope) => Effect.forEach(types, ([type, produce]) => Effect.map(states.waiting(scope, type, 100), (jobs) => ({ scope, type, produce, jobs })), { concurrency: "unbounded" }),
    { concurrency: "unbounded" }
  )

type Waits = Effect.Success<ReturnType<typeof waitsOf>>

/** The events for waits not answered yet whose producer has data now; each is marked answered. */
const dueEvents = (marks: Set<string>, waits: Waits) => {
  const due: Array<{ scope: string; type: string; jobId: string; data: unknown }> = []
  for (const { scope, type, produce, jobs } of waits.flat()) {
    for (const { jobId, since } of jobs) {
      const mark = `${jobId}|${type}|${since}`
      if (marks.has(mark)) continue
      const data = produce(jobId, scope)
      if (data === undefined) continue
      marks.add(mark)
      due.push({ scope, type, jobId, data })
    }
  }
  return due
}

// One round: the waits sets of every scope and type read at once, and every new wait's
// event published at once (each QoS 1 publish waits for its PUBACK). One after the other,
// a round with n new waits took n + 2 round trips, and the last job in it waited for all of
// them: under load that was most of the time a job spent on a pull step.
const emitRound = (s: StationDeps, states: SfcStateDao["Service"], scopes: ScopeRegistry["Service"]) => {
  const types = Object.entries(s.options.events ?? {})
  return Effect.gen(function* () {
    const due = dueEvents(s.marks, yield* waitsOf(states, yield* scopes.list, types))
    yield* Effect.forEach(due, ({ scope, type, jobId, data }) => emit(s, scope, type, data, { jobId }), { concurrency: "unbounded", discard: true })
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("simulated station event round failed", cause)))
}

/**
 * A station over MQTT, for tests (and the benchmarks): it answers push commands on their response topic
 * (after an optional delay, with scripted data or an error) and emits pull events for the jobs
 * waiting on its event types, all on the wire a real station uses. To know which job waits it
 * reads the island's waits sets (`SfcStateDao.waiting`), which a real station would not need:
 * it would emit when its process says so, as `emit` does.
 */
export const makeSimulatedStation = (
  options: SimulatedStationOptions
): Effect.Effect<SimulatedStation, MqttConnectError | InvalidTopic | MqttSubscribeError, Scope.Scope | SfcStateDao | ScopeRegistry> =>
  Effect.gen(function* () {
    const mqtt = yield* makeMqttConnection({ url: options.url, clientIdBase: "station", reconnectMinMs: 100 })
    const s: StationDeps = { options, source: options.source ?? DEFAULT_SOURCE, mqtt, commands: [], emitted: [], marks: new Set() }
    const answering = yield* FiberSet.make()
    const inbox = yield* mqtt.subscribe(yield* Effect.fromResult(stationCommandFilter(options.topics)), { qos: 1 })
    yield* inbox.pipe(Stream.runForEach((message) => FiberSet.run(answering, answer(s, message))), Effect.forkScoped)
    const round = emitRound(s, yield* SfcStateDao, yield* ScopeRegistry)
    if (Object.keys(options.events ?? {}).length > 0) {
      yield* round.pipe(Effect.repeat(Schedule.spaced(`${options.eventPollMs ?? 20} millis`)), Effect.forkScoped)
    }
    return {
      clientId: mqtt.clientId,
      commands: s.commands,
      emitted: s.emitted,
      emit: (scope: string, type: string, data: unknown, extra?: { readonly jobId?: string; readonly id?: string }) => emit(s, scope, type, data, extra)
    }
  })
