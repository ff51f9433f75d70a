import { Effect, FiberSet, Result, type Scope, Stream } from "effect"
import {
  type CloudEvent,
  type IncomingMessage,
  type InvalidTopic,
  makeCloudEvent,
  makeErrorReply,
  makeMqttConnection,
  type MqttConnectError,
  type MqttConnectionService,
  type MqttOptions,
  type MqttSubscribeError,
  type PublishFailure,
  stationCommandTopic,
  stationEventsTopic,
  type StationTopicConfig
} from "@microdcs/cloudevents-mqtt"
import { type Answer, makeAnswers, type PlannedEvent, type ReceivedCommand } from "./CommandAnswers.js"
import { StationScopeUnknown } from "./Errors.js"
import { type EventDataSource, makeEventData } from "./EventData.js"
import { followJobStates, isEndState } from "./JobStates.js"
import { scheduleEvents } from "./ScheduledEvents.js"
import type { StationScript } from "./StationScript.js"
import { makeStationStats, type StationStats, type StationStatsCounter } from "./StationStats.js"
import { makeTriggeredEvents, type TriggeredEvents } from "./TriggeredEvents.js"

export interface StationOptions {
  /** The broker; the station has a connection of its own (client id `island-sim-station-…` unless set). */
  readonly mqtt: MqttOptions
  /** Prefix, discriminator and station level: the island's. */
  readonly topics: StationTopicConfig
  readonly script: StationScript
  /** Serve these scopes instead of the script's. */
  readonly scopes?: ReadonlyArray<string> | undefined
  /** Told about every command and the answer it gets (before the reply goes out). */
  readonly onCommand?: ((command: ReceivedCommand, answer: Answer) => void) | undefined
  /** Told about every event sent, each copy of a resent one included. */
  readonly onEvent?: ((event: EmittedEvent) => void) | undefined
}

/** An event the station published. `copy` counts the sends of one event id: 1, then 2, 3, ... for resends. */
export interface EmittedEvent {
  readonly scope: string
  readonly type: string
  readonly id: string
  readonly jobId: string | undefined
  readonly data: unknown
  readonly copy: number
}

export interface EmitOptions {
  /** The data; default: the script's for this event type (sequence and variant included), else `{}`. */
  readonly data?: unknown
  /** Names the job (the `jobid` extension); without it the island picks the job that has waited longest. */
  readonly jobId?: string | undefined
  /** The CloudEvent id (default a new UUID): the same id twice is one event to the island. */
  readonly id?: string | undefined
}

export interface Station {
  readonly clientId: string
  readonly scopes: ReadonlyArray<string>
  readonly stats: () => StationStats
  /** Publishes a pull event now, once. */
  readonly emit: (scope: string, type: string, options?: EmitOptions) => Effect.Effect<void, PublishFailure | StationScopeUnknown>
}

/** What the station's functions share. */
interface StationDeps {
  readonly options: StationOptions
  readonly script: StationScript
  readonly mqtt: MqttConnectionService
  readonly stats: StationStatsCounter
  readonly answers: (command: ReceivedCommand) => Answer
}

const publishEvent = (s: StationDeps, scope: string, event: PlannedEvent, jobId: string | undefined, copy: number) =>
  Effect.gen(function* () {
    const topic = yield* Effect.fromResult(stationEventsTopic(s.options.topics, scope))
    const extensions = jobId === undefined ? {} : { jobid: jobId }
    yield* s.mqtt.publish(topic, makeCloudEvent({ source: s.script.source, type: event.type, subject: scope, id: event.id, data: event.data, extensions }), { qos: 1 })
    s.stats.sent(copy)
    s.options.onEvent?.({ scope, type: event.type, id: event.id, jobId, data: event.data, copy })
  })

const commandOf = (scope: string, event: CloudEvent): ReceivedCommand => ({
  scope,
  type: event.type,
  id: event.id,
  jobId: event.extensions["jobid"],
  action: event.extensions["action"],
  attempt: event.extensions["attempt"],
  correlationId: event.extensions["correlationid"],
  parameters: event.data
})

const replyTo = (s: StationDeps, message: IncomingMessage, command: ReceivedCommand, answer: Answer & { _tag: "Reply" }) => {
  const type = `${command.type}.reply`
  const base =
    answer.error === undefined
      ? makeCloudEvent({ source: s.script.source, type, subject: command.scope })
      : makeErrorReply({ source: s.script.source, type, subject: command.scope, kind: "StationError", message: answer.error })
  return s.mqtt.reply(message, { ...base, datacontenttype: "application/json", data: answer.data })
}

const answer = (s: StationDeps, triggered: TriggeredEvents, scope: string, message: IncomingMessage) =>
  Effect.gen(function* () {
    if (Result.isFailure(message.decoded)) return yield* Effect.logWarning("island-sim: unreadable command").pipe(Effect.annotateLogs({ reason: message.decoded.failure.message }))
    const command = commandOf(scope, message.decoded.success)
    const given = s.answers(command)
    s.stats.answered(command.type, given)
    s.options.onCommand?.(command, given)
    if (given._tag === "Silent") return
    if (given.delayMs > 0) yield* Effect.sleep(given.delayMs)
    yield* replyTo(s, message, command, given)
    if (given.emit.length === 0) return
    const jobId = command.jobId
    if (jobId === undefined) return yield* Effect.logWarning("island-sim: a command without jobid sets off no event").pipe(Effect.annotateLogs({ type: command.type }))
    for (const event of given.emit) yield* triggered.trigger(scope, jobId, event)
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("island-sim: could not answer a command", cause)))

/** Subscribes to the command topic of each of its scopes (never a `+` filter) and answers what arrives. */
const serveCommands = (s: StationDeps, triggered: TriggeredEvents, scopes: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const answering = yield* FiberSet.make()
    for (const scope of scopes) {
      const inbox = yield* s.mqtt.subscribe(yield* Effect.fromResult(stationCommandTopic(s.options.topics, scope)), { qos: 1 })
      // Taken at once: the reply is the answer, and a delayed one must not hold the broker's in-flight window.
      yield* inbox.pipe(Stream.runForEach((message) => Effect.andThen(message.ack, FiberSet.run(answering, answer(s, triggered, scope, message)))), Effect.forkScoped)
    }
  })

/**
 * A station over MQTT that needs nothing but the broker: it answers the push commands of its
 * scopes as its script says, emits the pull events the script sets off (re-sent with the same id
 * until the job ends, see `TriggeredEvents`) or schedules, and follows the island's job status
 * events to know when a job has ended. Runs until its scope closes.
 */
export const makeStation = (
  options: StationOptions
): Effect.Effect<Station, MqttConnectError | InvalidTopic | MqttSubscribeError, Scope.Scope> =>
  Effect.gen(function* () {
    const script = options.script
    const scopes = options.scopes ?? script.scopes
    const mqtt = yield* makeMqttConnection({ clientIdBase: "island-sim-station", reconnectMinMs: 100, ...options.mqtt })
    const data = makeEventData()
    const s: StationDeps = { options, script, mqtt, stats: makeStationStats(), answers: makeAnswers(script, data) }
    const triggered = yield* makeTriggeredEvents((scope, event, jobId, copy) => publishEvent(s, scope, event, jobId, copy))
    const ended = (scope: string, jobId: string) => Effect.andThen(Effect.sync(() => data.forget(scope, jobId)), triggered.jobEnded(scope, jobId))
    yield* followJobStates(mqtt, options.topics, scopes, (seen) => (isEndState(seen.state) ? ended(seen.scope, seen.jobId) : Effect.void))
    yield* serveCommands(s, triggered, scopes)
    // Suspended: a repeated emit (the schedule's) draws a new id and the next data each time.
    const emit = (scope: string, type: string, o: EmitOptions = {}): Effect.Effect<void, PublishFailure | StationScopeUnknown> =>
      Effect.suspend((): Effect.Effect<void, PublishFailure | StationScopeUnknown> =>
        scopes.includes(scope)
          ? publishEvent(s, scope, { type, id: o.id ?? crypto.randomUUID(), afterMs: 0, data: o.data ?? eventData(script, data, type, scope, o.jobId) }, o.jobId, 1)
          : Effect.fail(new StationScopeUnknown({ scope, scopes }))
      )
    yield* scheduleEvents(script.schedule, (event) => emit(event.scope, event.type, { jobId: event.jobId }))
    return { clientId: mqtt.clientId, scopes, stats: s.stats.snapshot, emit }
  })

const eventData = (script: StationScript, data: EventDataSource, type: string, scope: string, jobId: string | undefined) => {
  const event = script.events.get(type)
  return event === undefined ? {} : data.next(event, type, scope, jobId)
}
