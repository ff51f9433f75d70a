import { Effect, Result, Layer } from "effect"
import {
  eventsTopic,
  type IncomingMessage,
  MqttConnection,
  scopeOf,
  type TopicConfig,
  validateLevel,
  validateLevels
} from "@microdcs/cloudevents-mqtt"
import { InvalidTopic } from "@microdcs/cloudevents-mqtt"
import { type TriggerOutcome, TriggerStarts } from "@microdcs/job-control"
import { statusEvent } from "./JobControlEvents.js"
import { runWorker, type WorkerOptions } from "./MessageWorker.js"
import { logText } from "./RequestLog.js"
import { scopeOfStationTopic } from "@microdcs/cloudevents-mqtt"

export interface TriggerIngressOptions extends WorkerOptions {
  readonly topics: TopicConfig
  /** Our CloudEvent `source`: the triggered StoreAndStart requests and their status events carry it. */
  readonly source: string
  /**
   * How many topic levels between the prefix and `[/D]/events` are watched (default 3): `P/+/events`
   * (a scope's events), `P/+/+/events` (a subject `scope.cell`, a station's `P/station/{scope}/events`), ...
   */
  readonly eventLevels?: number | undefined
  /** Told about every trigger outcome (for metrics): `started`, `duplicate` or `refused` with its kind. */
  readonly onTriggerOutcome?: ((trigger: string, outcome: "started" | "duplicate" | "refused", kind?: string) => void) | undefined
}

export const DEFAULT_TRIGGER_EVENT_LEVELS = 3
export const MAX_TRIGGER_EVENT_LEVELS = 8

/** `P/+[/D]/events`, `P/+/+[/D]/events`, ... up to `levels`: every events topic of the island. */
export const triggerEventFilters = (config: TopicConfig, levels: number = DEFAULT_TRIGGER_EVENT_LEVELS): Result.Result<ReadonlyArray<string>, InvalidTopic> =>
  Result.gen(function* () {
    const prefix = yield* validateLevels("prefix", config.prefix)
    const tail = config.discriminator === undefined ? "" : `/${yield* validateLevel("discriminator", config.discriminator)}`
    if (!Number.isInteger(levels) || levels < 1 || levels > MAX_TRIGGER_EVENT_LEVELS) {
      return yield* Result.fail(new InvalidTopic({ part: "eventLevels", value: String(levels), message: `eventLevels must be an integer from 1 to ${MAX_TRIGGER_EVENT_LEVELS}` }))
    }
    return Array.from({ length: levels }, (_, n) => `${prefix}${"/+".repeat(n + 1)}${tail}/events`)
  })

const outcomeWord = (outcome: TriggerOutcome) =>
  outcome._tag === "Started" ? ("started" as const) : outcome._tag === "AlreadyStarted" ? ("duplicate" as const) : ("refused" as const)

/**
 * The trigger ingress: watches the island's events topics and, for each
 * event that fires a trigger, starts its job order through `TriggerStarts` (a StoreAndStart with
 * the acceptance checks), publishes the status events, then acknowledges. Not shared: every
 * instance sees every event (a share handed to a member that then crashes would be lost with its
 * session); the job order id derived from the event makes the extra copies start nothing. A store
 * failure leaves the message unacknowledged, so the broker's redelivery tries again.
 */
export const runTriggerIngress = (options: TriggerIngressOptions) =>
  Effect.gen(function* () {
    const mqtt = yield* MqttConnection
    const starts = yield* TriggerStarts
    const { topics, source } = options

    const handle = (message: IncomingMessage) =>
      Effect.gen(function* () {
        // Not CloudEvents we can read: nobody's trigger, and nobody's to answer here.
        if (Result.isFailure(message.decoded)) return
        const event = message.decoded.success
        const scope = scopeOf(event) ?? scopeOfStationTopic(topics, message.topic)
        const outcomes = yield* starts.start({ source: event.source, id: event.id, type: event.type, subject: event.subject, scope }, source)
        for (const outcome of outcomes) {
          options.onTriggerOutcome?.(outcome.trigger.id, outcomeWord(outcome), outcome._tag === "Refused" ? outcome.kind : undefined)
          if (outcome._tag !== "Started") continue
          yield* Effect.logInfo("trigger started a job order").pipe(
            Effect.annotateLogs({ trigger: outcome.trigger.id, jobOrderId: outcome.jobOrderId, type: logText(event.type), id: logText(event.id), source: logText(event.source) })
          )
          for (const status of outcome.statusEvents) {
            const topic = eventsTopic(topics, status.scope)
            if (Result.isFailure(topic)) continue
            // Best effort, as job control's: the job order is stored and the publisher shows it anyway.
            yield* mqtt.publish(topic.success, statusEvent(source, event, status), { qos: 1 }).pipe(
              Effect.catch((error) => Effect.logWarning("triggered job order's status event not sent").pipe(Effect.annotateLogs({ error: logText(error.message) })))
            )
          }
        }
      })

    const filters = yield* Effect.fromResult(triggerEventFilters(topics, options.eventLevels))
    // Kept in the session: events that arrive while this instance restarts wait for it in the broker.
    const streams = yield* Effect.forEach(filters, (filter) => mqtt.subscribe(filter, { qos: 1, keepInSession: true }))
    yield* runWorker("trigger ingress", streams, handle, options)
  })

/** {@link runTriggerIngress} as a layer; it needs `MqttConnection` and `TriggerStarts` (with its catalog and `JobControl`). */
export const TriggerIngress = (options: TriggerIngressOptions) => Layer.effectDiscard(runTriggerIngress(options))
