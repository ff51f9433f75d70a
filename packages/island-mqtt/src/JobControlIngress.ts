import { Effect, Either, Layer } from "effect"
import {
  type CloudEvent,
  commandFilters,
  eventsTopic,
  type IncomingMessage,
  type InvalidTopic,
  MqttConnection,
  type OutgoingMessage,
  type PublishFailure,
  sharedCommandFilters,
  type TopicConfig
} from "@microdcs/cloudevents-mqtt"
import {
  admissionTarget,
  type ClaimedEvent,
  exactlyOnce,
  type HandleResult,
  keepClaimHolder,
  JobControl,
  type JobControlFailure,
  type JobControlReply,
  type JobControlRequest,
  parsedRequest,
  type StatusEvent
} from "@microdcs/job-control"
import { badInputReply, replyEvent, statusEvent, toJobControlRequest } from "./JobControlEvents.js"
import { hold, retryFailed, retrySchedule, runWorker, type WorkerOptions } from "./MessageWorker.js"
import { logRequest, logText, noteOutcome, noteReply, type RequestRecord } from "./RequestLog.js"
import { decodeStoredReply, encodeStoredReply } from "./StoredReply.js"

export interface JobControlIngressOptions extends WorkerOptions {
  /** Prefix, discriminator and wildcard levels of the command filters and events topics. */
  readonly topics: TopicConfig
  /** Subscribe as `$share/{group}/...`, so the instances of one island split the commands. */
  readonly sharedGroup?: string | undefined
  /** Our CloudEvent `source` on replies and status events. */
  readonly source: string
  /**
   * Names this instance in its dedupe claims (default `island`), with a random part per run: the
   * claim holder whose liveness lets a duplicate take over the claims of a run that died.
   */
  readonly instanceId?: string | undefined
  /** Dedupe lease while a request is processed (default 60 s): about 2 × the slowest handler. */
  readonly leaseMs?: number | undefined
  /** How long a processed request is remembered (default 10 min). */
  readonly doneTtlMs?: number | undefined
  /**
   * Told about every reply or status event that was dropped (for metrics): the broker refused it
   * (`refused`, a PUBACK reason code of 0x80 or above), its topic is not one we may publish to
   * (`invalid-topic`, e.g. a Response Topic `$SYS/x`), or it cannot be encoded (`not-encodable`).
   * Such a publish is never retried, and the request is acknowledged.
   */
  readonly onPublishDropped?: ((what: "reply" | "status event", reason: PublishDropReason) => void) | undefined
  /** More request types, by CloudEvent type (see {@link ExtraRequestHandler}). */
  readonly extraRequests?: Readonly<Record<string, ExtraRequestHandler>> | undefined
}

export type PublishDropReason = "refused" | "invalid-topic" | "not-encodable"

/**
 * A request type the ingress takes beside job control's own (the journal's configuration event),
 * run exactly once like a station configuration event, its reply sent and its status events
 * published.
 */
export interface ExtraRequestHandler {
  /** A refusal decided before anything is written (not even a dedupe claim), else `undefined`. */
  readonly refuse?: ((request: JobControlRequest) => JobControlReply | undefined) | undefined
  readonly handle: (request: JobControlRequest) => Effect.Effect<HandleResult, JobControlFailure>
}

/**
 * `retry` for a publish whose first attempt already failed (in a batch): the first run fails with
 * that error, so the retry policy judges it and waits as if this effect had sent it.
 */
const failedOnce = <A, R>(first: PublishFailure, again: Effect.Effect<A, PublishFailure, R>): Effect.Effect<A, PublishFailure, R> => {
  let replayed = false
  return Effect.suspend(() => {
    if (replayed) return again
    replayed = true
    return Effect.fail(first)
  })
}

const MAX_CACHED_TOPICS = 1000

const dropReasonOf = (error: PublishFailure): PublishDropReason =>
  error._tag === "InvalidTopic" ? "invalid-topic" : error._tag === "EncodeError" ? "not-encodable" : "refused"

const annotate = (message: IncomingMessage, event?: CloudEvent) =>
  Effect.annotateLogs({ topic: message.topic, ...(event ? { type: logText(event.type), id: logText(event.id), source: logText(event.source) } : {}) })

/**
 * The job control ingress: subscribes to the command filters and, per message,
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
    // Before any claim, and removed only after the worker let its in-flight requests finish.
    const holder = yield* keepClaimHolder(options.instanceId ?? "island")

    // After the request is marked done a redelivery would be skipped as a duplicate, so a
    // publish that fails for the connection's sake (no PUBACK in time) is retried here, with the
    // same event (id). One the broker refused, or that cannot be sent at all, would fail the same
    // way forever and hold its worker slot: it is dropped and counted. True when it was sent.
    const publishing = (what: "reply" | "status event", effect: Effect.Effect<void, PublishFailure>): Effect.Effect<boolean> =>
      effect.pipe(
        retryFailed({ schedule, while: (error: PublishFailure) => error._tag === "MqttPublishError" && error.reason !== "rejected" }),
        Effect.as(true),
        Effect.catchAll((error) =>
          Effect.sync(() => options.onPublishDropped?.(what, dropReasonOf(error))).pipe(
            Effect.zipRight(Effect.logWarning(`${what} not sent; dropped`)),
            Effect.annotateLogs({ error: logText(error.message), reason: dropReasonOf(error) }),
            Effect.as(false)
          )
        )
      )

    // A reply through the retry policy above, its fate noted for the request's log line.
    const settleReply = (record: RequestRecord, message: IncomingMessage, replying: Effect.Effect<void, PublishFailure>) =>
      Effect.map(publishing("reply", replying), (sent) => {
        if (message.responseTopic !== undefined) noteReply(record, sent ? "sent" : "dropped")
      })

    const sendReply = (record: RequestRecord, message: IncomingMessage, event: CloudEvent) => settleReply(record, message, mqtt.reply(message, event))

    // The events topic of a scope, built once per scope (the topic config is fixed): a status
    // event is sent for nearly every request. Bounded: past MAX_CACHED_TOPICS scopes it starts over.
    const eventsTopics = new Map<string, Either.Either<string, InvalidTopic>>()
    const eventsTopicOf = (scope: string): Either.Either<string, InvalidTopic> => {
      const cached = eventsTopics.get(scope)
      if (cached !== undefined) return cached
      const topic = eventsTopic(topics, scope)
      if (eventsTopics.size >= MAX_CACHED_TOPICS) eventsTopics.clear()
      eventsTopics.set(scope, topic)
      return topic
    }

    // The reply and every status event of a request are handed to the client at once (one socket
    // write, one wait for their PUBACKs), the reply first; one that failed is then retried or
    // dropped on its own, as above.
    const sendAnswer = (
      record: RequestRecord,
      message: IncomingMessage,
      reply: CloudEvent,
      request: CloudEvent,
      statuses: ReadonlyArray<StatusEvent>
    ): Effect.Effect<void> => {
      if (statuses.length === 0) return sendReply(record, message, reply)
      const unsendable: Array<Effect.Effect<void>> = []
      const outgoing: Array<OutgoingMessage> = [{ _tag: "Reply", request: message, event: reply }]
      for (const status of statuses) {
        const topic = eventsTopicOf(status.scope)
        if (Either.isLeft(topic)) {
          unsendable.push(Effect.logWarning("status event has no valid topic").pipe(Effect.annotateLogs({ scope: status.scope, error: topic.left.message })))
        } else outgoing.push({ _tag: "Publish", topic: topic.right, event: statusEvent(source, request, status), options: { qos: 1 } })
      }
      const again = (error: PublishFailure, out: OutgoingMessage): Effect.Effect<void> =>
        out._tag === "Reply"
          ? settleReply(record, message, failedOnce(error, mqtt.reply(message, out.event)))
          : Effect.asVoid(publishing("status event", failedOnce(error, mqtt.publish(out.topic, out.event, out.options))))
      const sent = Effect.flatMap(mqtt.publishAll(outgoing), (outcomes) => {
        if (outcomes[0] === undefined && message.responseTopic !== undefined) noteReply(record, "sent")
        const failed = outcomes.flatMap((error, i) => (error === undefined ? [] : [{ error, out: outgoing[i]! }]))
        if (failed.length === 0) return Effect.void
        return Effect.forEach(failed, ({ error, out }) => again(error, out), { discard: true })
      })
      return unsendable.length === 0 ? sent : Effect.zipRight(Effect.all(unsendable, { discard: true }), sent)
    }

    const handle = (message: IncomingMessage, record: RequestRecord) =>
      Effect.gen(function* () {
        if (Either.isLeft(message.decoded)) {
          const { kind, message: reason } = message.decoded.left
          noteOutcome(record, "refused", kind, reason)
          return yield* sendReply(record, message, badInputReply(source, kind, reason))
        }
        const event = message.decoded.right
        const request = toJobControlRequest(event)
        const extra = options.extraRequests !== undefined && Object.hasOwn(options.extraRequests, event.type) ? options.extraRequests[event.type] : undefined
        const refusal = extra?.refuse?.(request)
        if (refusal !== undefined) {
          noteOutcome(record, "refused", refusal.error?.kind, refusal.error?.message)
          return yield* sendReply(record, message, replyEvent(source, event, refusal))
        }
        // Parsed once: `JobControl.handle` finds this parse of the same request object.
        const parsed = extra === undefined ? parsedRequest(request) : undefined
        if (extra === undefined && (parsed === undefined || Either.isLeft(parsed.command))) {
          // Refused before the store is touched (unknown type, no subject, malformed payload):
          // no dedupe claim either, so nothing at all is written.
          const { reply } = yield* jobControl.handle(request)
          noteOutcome(record, "refused", reply.error?.kind, reply.error?.message)
          return yield* sendReply(record, message, replyEvent(source, event, reply))
        }
        // The reply event is built before the done mark, so the very event sent is kept with it.
        const answer = (result: HandleResult) => ({ result, reply: replyEvent(source, event, result.reply) })
        const answered =
          extra === undefined
            ? (claimed: ClaimedEvent) => Effect.map(jobControl.handle(request, claimed), answer)
            : Effect.map(extra.handle(request), answer)
        // A Store or StoreAndStart: the claim reads the job order's admission in its round trip.
        const admitJobOrder = parsed !== undefined && Either.isRight(parsed.command) ? admissionTarget(parsed.command.right) : undefined
        const dedupe = { source: event.source, id: event.id, leaseMs: options.leaseMs, doneTtlMs: options.doneTtlMs, admitJobOrder, holder }
        const outcome = yield* exactlyOnce({ ...dedupe, storedReply: ({ reply }) => encodeStoredReply(reply) }, answered).pipe(
          // The source or id cannot name a dedupe key (too long, NUL): bad input, nothing claimed.
          Effect.catchTag("InvalidInput", (error) =>
            Effect.suspend(() => {
              noteOutcome(record, "refused", "attributes", `${error.field}: ${error.message}`)
              return sendReply(record, message, badInputReply(source, "attributes", `${error.field}: ${error.message}`, event))
            }).pipe(Effect.as(undefined))
          ),
          // The handler outlived its lease: its effect happened but its result is lost, and a
          // redelivery could be claimed by someone else. Acknowledge; there is nothing to send.
          Effect.catchTag("LeaseLost", (error) =>
            Effect.logError("request processed after its dedupe lease ran out; no reply sent").pipe(
              annotate(message, event),
              Effect.annotateLogs({ error: error.message }),
              Effect.zipRight(Effect.sync(() => noteOutcome(record, "lease-lost"))),
              Effect.as(undefined)
            )
          )
        )
        if (outcome === undefined) return
        if (outcome._tag === "Held") {
          // Another holder's claim is live; if it crashed, acknowledging would lose the request.
          yield* Effect.logDebug("duplicate request held until the other claim ends").pipe(
            annotate(message, event),
            Effect.annotateLogs({ remainingMs: outcome.remainingMs })
          )
          return hold(outcome.remainingMs)
        }
        if (outcome._tag === "Duplicate") {
          noteOutcome(record, "duplicate")
          // Done: answer with the reply kept from the first delivery, the same event again.
          const kept = outcome.reply === undefined ? undefined : decodeStoredReply(outcome.reply)
          if (kept !== undefined && Either.isRight(kept)) return yield* sendReply(record, message, kept.right)
          if (kept !== undefined) {
            yield* Effect.logWarning("kept reply unreadable; duplicate not answered").pipe(annotate(message, event), Effect.annotateLogs({ error: kept.left }))
          }
          return yield* Effect.logDebug("duplicate request acknowledged without processing").pipe(annotate(message, event))
        }
        noteOutcome(record, "processed", outcome.value.result.reply.error?.kind)
        yield* sendAnswer(record, message, outcome.value.reply, event, outcome.value.result.statusEvents)
      })

    const filters = options.sharedGroup === undefined ? yield* commandFilters(topics) : yield* sharedCommandFilters(topics, options.sharedGroup)
    // One worker over every filter, so `concurrency` bounds the ingress as a whole.
    // Kept in the session: requests sent while this instance restarts wait for it in the broker.
    const streams = yield* Effect.forEach(filters, (filter) => mqtt.subscribe(filter, { qos: 1, keepInSession: true }))
    // One log line per request handled or refused; a held one is logged once it is handled.
    const logged = (message: IncomingMessage) => logRequest(message, (record) => handle(message, record), (result) => result !== undefined)
    yield* runWorker("job control ingress", streams, logged, options)
  })

/** {@link runJobControlIngress} as a layer; it needs `MqttConnection`, `JobControl` and the store's `DedupeStore` and `ClaimHolders`. */
export const JobControlIngress = (options: JobControlIngressOptions) => Layer.scopedDiscard(runJobControlIngress(options))
