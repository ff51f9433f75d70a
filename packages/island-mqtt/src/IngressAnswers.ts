import { Effect, Result } from "effect"
import {
  type CloudEvent,
  eventsTopic,
  type IncomingMessage,
  type InvalidTopic,
  type MessageTooLarge,
  type MqttConnectionService,
  type OutgoingMessage,
  type PublishFailure,
  type TopicConfig
} from "@microdcs/cloudevents-mqtt"
import type { StatusEvent } from "@microdcs/job-control"
import { statusEvent, tooLargeReply } from "./JobControlEvents.js"
import { retryFailed, type retrySchedule } from "./MessageWorker.js"
import { logText, noteReply, type RequestRecord } from "./RequestLog.js"

/**
 * Answering a job control request: its reply and status events, sent together, and one that
 * failed retried or dropped on its own.
 */

export type PublishDropReason = "refused" | "invalid-topic" | "not-encodable" | "too-large"

/** What answering needs: the connection, our source, the topics and the retry policy. */
export interface AnswerDeps {
  readonly mqtt: MqttConnectionService
  /** Our CloudEvent `source` on replies and status events. */
  readonly source: string
  readonly topics: TopicConfig
  readonly schedule: ReturnType<typeof retrySchedule>
  readonly onPublishDropped: ((what: "reply" | "status event", reason: PublishDropReason) => void) | undefined
  // The events topic of a scope, built once per scope (the topic config is fixed): a status
  // event is sent for nearly every request. Bounded: past MAX_CACHED_TOPICS scopes it starts over.
  readonly eventsTopics: Map<string, Result.Result<string, InvalidTopic>>
}

const MAX_CACHED_TOPICS = 1000

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

const dropReasons: Record<PublishFailure["_tag"], PublishDropReason> = {
  InvalidTopic: "invalid-topic",
  EncodeError: "not-encodable",
  MessageTooLarge: "too-large",
  MqttPublishError: "refused"
}

const dropReasonOf = (error: PublishFailure): PublishDropReason => dropReasons[error._tag]

/** A failure for the connection's sake (no PUBACK in time, closed): worth another try. */
const retriable = (error: PublishFailure) => error._tag === "MqttPublishError" && error.reason !== "rejected"

// After the request is marked done a redelivery would be skipped as a duplicate, so a
// publish that fails for the connection's sake (no PUBACK in time) is retried here, with the
// same event (id). One the broker refused, or that cannot be sent at all, would fail the same
// way forever and hold its worker slot: it is dropped and counted. False when it was not sent.
const publishing = <A>(deps: AnswerDeps, what: "reply" | "status event", effect: Effect.Effect<A, PublishFailure>): Effect.Effect<A | false> =>
  effect.pipe(
    retryFailed({ schedule: deps.schedule, while: retriable }),
    Effect.catch((error) =>
      Effect.sync(() => deps.onPublishDropped?.(what, dropReasonOf(error))).pipe(
        Effect.andThen(Effect.logWarning(`${what} not sent; dropped`)),
        Effect.annotateLogs({ error: logText(error.message), reason: dropReasonOf(error) }),
        Effect.as(false as const)
      )
    )
  )

/**
 * A reply over the broker's Maximum Packet Size would be refused every time, and the request is
 * processed and acknowledged: it gets a small error reply naming both sizes instead, so the MES
 * learns why no answer data came. The reply itself counts as dropped (`too-large`).
 */
const instead = (deps: AnswerDeps, message: IncomingMessage, event: CloudEvent, error: MessageTooLarge) =>
  Effect.sync(() => deps.onPublishDropped?.("reply", "too-large")).pipe(
    Effect.andThen(Effect.logWarning("reply over the broker's maximum packet size; an error reply sent instead")),
    Effect.annotateLogs({ type: logText(event.type), bytes: error.bytes, limit: error.limit }),
    Effect.andThen(publishing(deps, "reply", deps.mqtt.reply(message, tooLargeReply(deps.source, event, error))))
  )

// A reply through the retry policy above, its fate noted for the request's log line. The
// too-large reply is handed out of the first retry loop, so a retry of the error reply that
// replaces it never sends (nor counts) the large one again.
const settleReply = (deps: AnswerDeps, record: RequestRecord, message: IncomingMessage, event: CloudEvent, replying: Effect.Effect<void, PublishFailure>) =>
  Effect.gen(function* () {
    const first = yield* publishing(deps, "reply", Effect.catchTag(replying, "MessageTooLarge", (error) => Effect.succeed(error)))
    const sent = first === undefined || (first !== false && (yield* instead(deps, message, event, first)) !== false)
    if (message.responseTopic !== undefined) noteReply(record, sent ? "sent" : "dropped")
  })

export const sendReply = (deps: AnswerDeps, record: RequestRecord, message: IncomingMessage, event: CloudEvent) =>
  settleReply(deps, record, message, event, deps.mqtt.reply(message, event))

const eventsTopicOf = ({ eventsTopics, topics }: AnswerDeps, scope: string): Result.Result<string, InvalidTopic> => {
  const cached = eventsTopics.get(scope)
  if (cached !== undefined) return cached
  const topic = eventsTopic(topics, scope)
  if (eventsTopics.size >= MAX_CACHED_TOPICS) eventsTopics.clear()
  eventsTopics.set(scope, topic)
  return topic
}

/** One message of the batch that failed, sent again on its own through the retry policy. */
const sendAgain = (deps: AnswerDeps, record: RequestRecord, message: IncomingMessage, error: PublishFailure, out: OutgoingMessage): Effect.Effect<void> =>
  out._tag === "Reply"
    ? settleReply(deps, record, message, out.event, failedOnce(error, deps.mqtt.reply(message, out.event)))
    : Effect.asVoid(publishing(deps, "status event", failedOnce(error, deps.mqtt.publish(out.topic, out.event, out.options))))

const settleBatch = (
  deps: AnswerDeps,
  record: RequestRecord,
  message: IncomingMessage,
  outgoing: ReadonlyArray<OutgoingMessage>,
  outcomes: ReadonlyArray<PublishFailure | undefined>
): Effect.Effect<void> => {
  if (outcomes[0] === undefined && message.responseTopic !== undefined) noteReply(record, "sent")
  const failed = outcomes.flatMap((error, i) => (error === undefined ? [] : [{ error, out: outgoing[i]! }]))
  if (failed.length === 0) return Effect.void
  return Effect.forEach(failed, ({ error, out }) => sendAgain(deps, record, message, error, out), { discard: true })
}

// The reply and every status event of a request are handed to the client at once (one socket
// write, one wait for their PUBACKs), the reply first; one that failed is then retried or
// dropped on its own, as above.
export const sendAnswer = (
  deps: AnswerDeps,
  record: RequestRecord,
  message: IncomingMessage,
  reply: CloudEvent,
  request: CloudEvent,
  statuses: ReadonlyArray<StatusEvent>
): Effect.Effect<void> => {
  if (statuses.length === 0) return sendReply(deps, record, message, reply)
  const unsendable: Array<Effect.Effect<void>> = []
  const outgoing: Array<OutgoingMessage> = [{ _tag: "Reply", request: message, event: reply }]
  for (const status of statuses) {
    const topic = eventsTopicOf(deps, status.scope)
    if (Result.isFailure(topic)) {
      unsendable.push(Effect.logWarning("status event has no valid topic").pipe(Effect.annotateLogs({ scope: status.scope, error: topic.failure.message })))
    } else outgoing.push({ _tag: "Publish", topic: topic.success, event: statusEvent(deps.source, request, status), options: { qos: 1 } })
  }
  const sent = Effect.flatMap(deps.mqtt.publishAll(outgoing), (outcomes) => settleBatch(deps, record, message, outgoing, outcomes))
  return unsendable.length === 0 ? sent : Effect.andThen(Effect.all(unsendable, { discard: true }), sent)
}
