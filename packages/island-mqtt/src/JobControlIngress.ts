import { Effect, Either, Layer, Stream } from "effect"
import {
  type CloudEvent,
  commandFilters,
  eventsTopic,
  type IncomingMessage,
  MqttConnection,
  type PublishFailure,
  sharedCommandFilters,
  type TopicConfig
} from "@microdcs/cloudevents-mqtt"
import { exactlyOnce, JobControl, parseRequest, type StatusEvent } from "@microdcs/job-control"
import { badInputReply, replyEvent, statusEvent, toJobControlRequest } from "./JobControlEvents.js"
import { retrySchedule, runWorker, type WorkerOptions } from "./MessageWorker.js"

export interface JobControlIngressOptions extends WorkerOptions {
  /** Prefix, discriminator and wildcard levels of the command filters and events topics. */
  readonly topics: TopicConfig
  /** Subscribe as `$share/{group}/...`, so the instances of one island split the commands. */
  readonly sharedGroup?: string | undefined
  /** Our CloudEvent `source` on replies and status events. */
  readonly source: string
  /** Dedupe lease while a request is processed (default 60 s): about 2 × the slowest handler. */
  readonly leaseMs?: number | undefined
  /** How long a processed request is remembered (default 10 min). */
  readonly doneTtlMs?: number | undefined
}

const annotate = (message: IncomingMessage, event?: CloudEvent) =>
  Effect.annotateLogs({ topic: message.topic, ...(event ? { type: event.type, id: event.id, source: event.source } : {}) })

/**
 * The job control ingress (island.md §2): subscribes to the command filters and, per message,
 * answers bad input with an error reply, or runs the request exactly once through `JobControl`,
 * replies, publishes the status events and only then acknowledges. A scoped layer: closing it
 * stops taking messages and lets the in-flight ones finish.
 */
export const runJobControlIngress = (options: JobControlIngressOptions) =>
  Effect.gen(function* () {
    const mqtt = yield* MqttConnection
    const jobControl = yield* JobControl
    const { source, topics } = options
    const schedule = retrySchedule(options)

    // After the request is marked done a redelivery would be skipped as a duplicate, so a
    // publish that fails for the connection's sake is retried here, with the same event (id).
    const publishing = (what: string, effect: Effect.Effect<void, PublishFailure>) =>
      effect.pipe(
        Effect.retry({ schedule, while: (error) => error._tag === "MqttPublishError" }),
        Effect.catchAll((error) => Effect.logWarning(`${what} not sent`).pipe(Effect.annotateLogs({ error: error.message })))
      )

    const sendReply = (message: IncomingMessage, event: CloudEvent) => publishing("reply", mqtt.reply(message, event))

    const publishStatus = (request: CloudEvent, statuses: ReadonlyArray<StatusEvent>) =>
      Effect.forEach(
        statuses,
        (status) =>
          Either.match(eventsTopic(topics, status.scope), {
            onLeft: (error) => Effect.logWarning("status event has no valid topic").pipe(Effect.annotateLogs({ scope: status.scope, error: error.message })),
            onRight: (topic) => publishing("status event", mqtt.publish(topic, statusEvent(source, request, status), { qos: 1 }))
          }),
        { discard: true }
      )

    const handle = (message: IncomingMessage) =>
      Effect.gen(function* () {
        if (Either.isLeft(message.decoded)) {
          const { kind, message: reason } = message.decoded.left
          yield* Effect.logInfo("bad input on a command topic").pipe(annotate(message), Effect.annotateLogs({ kind, reason }))
          return yield* sendReply(message, badInputReply(source, kind, reason))
        }
        const event = message.decoded.right
        const request = toJobControlRequest(event)
        const parsed = parseRequest(request)
        if (parsed === undefined || Either.isLeft(parsed.command)) {
          // Refused before the store is touched (unknown type, no subject, malformed payload):
          // no dedupe claim either, so nothing at all is written.
          const { reply } = yield* jobControl.handle(request)
          return yield* sendReply(message, replyEvent(source, event, reply))
        }
        const outcome = yield* exactlyOnce({ source: event.source, id: event.id, leaseMs: options.leaseMs, doneTtlMs: options.doneTtlMs }, jobControl.handle(request)).pipe(
          // The source or id cannot name a dedupe key (too long, NUL): bad input, nothing claimed.
          Effect.catchTag("InvalidInput", (error) =>
            sendReply(message, badInputReply(source, "attributes", `${error.field}: ${error.message}`, event)).pipe(Effect.as(undefined))
          ),
          // The handler outlived its lease: its effect happened but its result is lost, and a
          // redelivery could be claimed by someone else. Acknowledge; there is nothing to send.
          Effect.catchTag("LeaseLost", (error) =>
            Effect.logError("request processed after its dedupe lease ran out; no reply sent").pipe(
              annotate(message, event),
              Effect.annotateLogs({ error: error.message }),
              Effect.as(undefined)
            )
          )
        )
        if (outcome === undefined) return
        if (outcome._tag === "Duplicate") {
          // Busy: the claimant replies. Done: the reply went out with the first delivery.
          return yield* Effect.logDebug("duplicate request acknowledged without processing").pipe(
            annotate(message, event),
            Effect.annotateLogs({ reason: outcome.reason })
          )
        }
        yield* sendReply(message, replyEvent(source, event, outcome.value.reply))
        yield* publishStatus(event, outcome.value.statusEvents)
      })

    const filters = options.sharedGroup === undefined ? yield* commandFilters(topics) : yield* sharedCommandFilters(topics, options.sharedGroup)
    // One worker over every filter, so `concurrency` bounds the ingress as a whole.
    // Kept in the session: requests sent while this instance restarts wait for it in the broker.
    const streams = yield* Effect.forEach(filters, (filter) => mqtt.subscribe(filter, { qos: 1, keepInSession: true }))
    yield* runWorker("job control ingress", Stream.mergeAll(streams, { concurrency: "unbounded" }), handle, options)
  })

/** {@link runJobControlIngress} as a layer; it needs `MqttConnection`, `JobControl` and the store's `DedupeStore`. */
export const JobControlIngress = (options: JobControlIngressOptions) => Layer.scopedDiscard(runJobControlIngress(options))
