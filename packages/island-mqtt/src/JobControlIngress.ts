import { Effect, Result, Layer } from "effect"
import { type CloudEvent, commandFilters, type IncomingMessage, MqttConnection, sharedCommandFilters, type TopicConfig } from "@microdcs/cloudevents-mqtt"
import {
  admissionTarget,
  type ClaimedEvent,
  doneThrough,
  exactlyOnce,
  type ExactlyOnceResult,
  type HandleResult,
  keepClaimHolder,
  JobControl,
  type JobControlFailure,
  type JobControlReply,
  type JobControlRequest,
  parsedRequest,
  rememberLast
} from "@microdcs/job-control"
import { type AnswerDeps, type PublishDropReason, sendAnswer, sendReply } from "./IngressAnswers.js"
import { badInputReply, replyEvent, toJobControlRequest } from "./JobControlEvents.js"
import { type Hold, hold, retrySchedule, runWorker, type WorkerOptions } from "./MessageWorker.js"
import { logRequest, logText, noteOutcome, type RequestRecord } from "./RequestLog.js"
import { decodeStoredReply, encodeStoredReply } from "./StoredReply.js"

export type { PublishDropReason } from "./IngressAnswers.js"

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
   * (`invalid-topic`, e.g. a Response Topic `$SYS/x`), it cannot be encoded (`not-encodable`), or
   * it is over the broker's Maximum Packet Size (`too-large`; a reply is then answered with a
   * `ReplyTooLarge` error reply instead). Such a publish is never retried, and the request is acknowledged.
   */
  readonly onPublishDropped?: ((what: "reply" | "status event", reason: PublishDropReason) => void) | undefined
  /** More request types, by CloudEvent type (see {@link ExtraRequestHandler}). */
  readonly extraRequests?: Readonly<Record<string, ExtraRequestHandler>> | undefined
}

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

const annotate = (message: IncomingMessage, event?: CloudEvent) =>
  Effect.annotateLogs({ topic: message.topic, ...(event ? { type: logText(event.type), id: logText(event.id), source: logText(event.source) } : {}) })

/** What the ingress's functions share: answering's dependencies, job control, the claim holder and the options. */
interface IngressDeps extends AnswerDeps {
  readonly jobControl: JobControl["Service"]
  /** This instance's claim holder, named in its dedupe claims. */
  readonly holder: string
  readonly options: JobControlIngressOptions
}

/** What a processed request answers: the handler's result and the reply event built from it. */
interface Answered {
  readonly result: HandleResult
  readonly reply: CloudEvent
}

// The steps of `handle` below are plain functions returning effects, run inside its one
// generator: a request pays for no generator more than before they were split out.

const extraRequestOf = (options: JobControlIngressOptions, type: string): ExtraRequestHandler | undefined =>
  options.extraRequests !== undefined && Object.hasOwn(options.extraRequests, type) ? options.extraRequests[type] : undefined

/** A request that does not decode: refused with a bad-input reply. */
const refuseUndecodable = (deps: IngressDeps, record: RequestRecord, message: IncomingMessage, kind: string, reason: string) => {
  noteOutcome(record, "refused", kind, reason)
  return sendReply(deps, record, message, badInputReply(deps.source, kind, reason))
}

/** Refused with the reply of job control (or of an extra request type) before anything is written. */
const refuseEarly = (deps: IngressDeps, record: RequestRecord, message: IncomingMessage, event: CloudEvent, reply: JobControlReply) => {
  noteOutcome(record, "refused", reply.error?.kind, reply.error?.message)
  return sendReply(deps, record, message, replyEvent(deps.source, event, reply))
}

/** How the claimed request is run: through job control with its claim, or by its extra handler. */
const answeredBy = (deps: IngressDeps, event: CloudEvent, request: JobControlRequest, extra: ExtraRequestHandler | undefined) => {
  // The reply event is built before the done mark, so the very event sent is kept with it; a
  // mark landed with the request's create keeps the event built for its result.
  const answer = rememberLast((result: HandleResult): Answered => ({ result, reply: replyEvent(deps.source, event, result.reply) }))
  return extra === undefined
    ? (claimed: ClaimedEvent) =>
        Effect.map(deps.jobControl.handle(request, { admission: claimed.admission, done: claimed.done && doneThrough(claimed.done, answer) }), answer)
    : Effect.map(extra.handle(request), answer)
}

/** Runs the request exactly once; `undefined` when there is nothing more to answer (bad dedupe key, lease lost). */
const claimAndRun = (
  deps: IngressDeps,
  record: RequestRecord,
  message: IncomingMessage,
  event: CloudEvent,
  answered: ReturnType<typeof answeredBy>,
  admitJobOrder: ReturnType<typeof admissionTarget>
) => {
  const { options } = deps
  const dedupe = { source: event.source, id: event.id, leaseMs: options.leaseMs, doneTtlMs: options.doneTtlMs, admitJobOrder, holder: deps.holder }
  return exactlyOnce({ ...dedupe, storedReply: ({ reply }: Answered) => encodeStoredReply(reply) }, answered).pipe(
    // The source or id cannot name a dedupe key (too long, NUL): bad input, nothing claimed.
    Effect.catchTag("InvalidInput", (error) =>
      Effect.suspend(() => {
        noteOutcome(record, "refused", "attributes", `${error.field}: ${error.message}`)
        return sendReply(deps, record, message, badInputReply(deps.source, "attributes", `${error.field}: ${error.message}`, event))
      }).pipe(Effect.as(undefined))
    ),
    // The handler outlived its lease: its effect happened (or, for a create that would have
    // marked it done, did not) but its result is lost, and a redelivery could be claimed by
    // someone else. Acknowledge; there is nothing to send.
    Effect.catchTag("LeaseLost", (error) =>
      Effect.logError("request processed after its dedupe lease ran out; no reply sent").pipe(
        annotate(message, event),
        Effect.annotateLogs({ error: error.message }),
        Effect.andThen(Effect.sync(() => noteOutcome(record, "lease-lost"))),
        Effect.as(undefined)
      )
    )
  )
}

/** Done before: answered with the reply kept from the first delivery, the same event again. */
const answerDuplicate = (deps: IngressDeps, record: RequestRecord, message: IncomingMessage, event: CloudEvent, stored: string | undefined) => {
  noteOutcome(record, "duplicate")
  const kept = stored === undefined ? undefined : decodeStoredReply(stored)
  if (kept !== undefined && Result.isSuccess(kept)) return sendReply(deps, record, message, kept.success)
  const acknowledged = Effect.logDebug("duplicate request acknowledged without processing").pipe(annotate(message, event))
  if (kept === undefined) return acknowledged
  return Effect.andThen(
    Effect.logWarning("kept reply unreadable; duplicate not answered").pipe(annotate(message, event), Effect.annotateLogs({ error: kept.failure })),
    acknowledged
  )
}

const answerOutcome = (
  deps: IngressDeps,
  record: RequestRecord,
  message: IncomingMessage,
  event: CloudEvent,
  outcome: ExactlyOnceResult<Answered>
): Effect.Effect<void | Hold> => {
  if (outcome._tag === "Held") {
    // Another holder's claim is live; if it crashed, acknowledging would lose the request.
    return Effect.as(
      Effect.logDebug("duplicate request held until the other claim ends").pipe(annotate(message, event), Effect.annotateLogs({ remainingMs: outcome.remainingMs })),
      hold(outcome.remainingMs)
    )
  }
  if (outcome._tag === "Duplicate") return answerDuplicate(deps, record, message, event, outcome.reply)
  noteOutcome(record, "processed", outcome.value.result.reply.error?.kind)
  return sendAnswer(deps, record, message, outcome.value.reply, event, outcome.value.result.statusEvents)
}

const handle = (deps: IngressDeps, message: IncomingMessage, record: RequestRecord) =>
  Effect.gen(function* () {
    if (Result.isFailure(message.decoded)) return yield* refuseUndecodable(deps, record, message, message.decoded.failure.kind, message.decoded.failure.message)
    const event = message.decoded.success
    const request = toJobControlRequest(event)
    const extra = extraRequestOf(deps.options, event.type)
    const refusal = extra?.refuse?.(request)
    if (refusal !== undefined) return yield* refuseEarly(deps, record, message, event, refusal)
    // Parsed once: `JobControl.handle` finds this parse of the same request object.
    const parsed = extra === undefined ? parsedRequest(request) : undefined
    if (extra === undefined && (parsed === undefined || Result.isFailure(parsed.command))) {
      // Refused before the store is touched (unknown type, no subject, malformed payload):
      // no dedupe claim either, so nothing at all is written.
      const { reply } = yield* deps.jobControl.handle(request)
      return yield* refuseEarly(deps, record, message, event, reply)
    }
    // A Store or StoreAndStart: the claim reads the job order's admission in its round trip.
    const admitJobOrder = parsed !== undefined && Result.isSuccess(parsed.command) ? admissionTarget(parsed.command.success) : undefined
    const outcome = yield* claimAndRun(deps, record, message, event, answeredBy(deps, event, request, extra), admitJobOrder)
    if (outcome === undefined) return
    return yield* answerOutcome(deps, record, message, event, outcome)
  })

const ingressDepsOf = (options: JobControlIngressOptions) =>
  Effect.gen(function* () {
    const deps: IngressDeps = {
      mqtt: yield* MqttConnection,
      jobControl: yield* JobControl,
      source: options.source,
      topics: options.topics,
      schedule: retrySchedule(options),
      onPublishDropped: options.onPublishDropped,
      eventsTopics: new Map(),
      // Before any claim, and removed only after the worker let its in-flight requests finish.
      holder: yield* keepClaimHolder(options.instanceId ?? "island"),
      options
    }
    return deps
  })

/**
 * The job control ingress: subscribes to the command filters and, per message,
 * answers bad input with an error reply, or runs the request exactly once through `JobControl`,
 * replies, publishes the status events and only then acknowledges. A scoped layer: closing it
 * stops taking messages and lets the in-flight ones finish.
 */
export const runJobControlIngress = (options: JobControlIngressOptions) =>
  Effect.gen(function* () {
    const deps = yield* ingressDepsOf(options)
    const { mqtt, topics } = deps
    const filters = yield* Effect.fromResult(options.sharedGroup === undefined ? commandFilters(topics) : sharedCommandFilters(topics, options.sharedGroup))
    // One worker over every filter, so `concurrency` bounds the ingress as a whole.
    // Kept in the session: requests sent while this instance restarts wait for it in the broker.
    const streams = yield* Effect.forEach(filters, (filter) => mqtt.subscribe(filter, { qos: 1, keepInSession: true }))
    // One log line per request handled or refused; a held one is logged once it is handled.
    const logged = (message: IncomingMessage) => logRequest(message, (record) => handle(deps, message, record), (result) => result !== undefined)
    yield* runWorker("job control ingress", streams, logged, options)
  })

/** {@link runJobControlIngress} as a layer; it needs `MqttConnection`, `JobControl` and the store's `DedupeStore` and `ClaimHolders`. */
export const JobControlIngress = (options: JobControlIngressOptions) => Layer.effectDiscard(runJobControlIngress(options))
