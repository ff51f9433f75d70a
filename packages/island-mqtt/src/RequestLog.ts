import { Effect, Either, FiberRef } from "effect"
import { type IncomingMessage, requestIdOf, scopeOf, toMqttString } from "@microdcs/cloudevents-mqtt"

/**
 * One info line per job control request that was handled or refused (type, scope, id, outcome,
 * duration), as structured log annotations. The type, scope and id are the sender's text: they
 * are escaped and cut short, so a hostile request cannot forge log lines or flood the log.
 */

/** What became of a request: done, refused as bad input, a duplicate, or done after its lease ran out. */
export type RequestOutcome = "processed" | "refused" | "duplicate" | "lease-lost"

/** What became of its reply: sent, dropped (the broker or the topic refused it), or none to send. */
export type ReplyFate = "sent" | "dropped" | "none"

interface RequestRecord {
  outcome: RequestOutcome
  kind: string | undefined
  reason: string | undefined
  reply: ReplyFate
}

// The record of the request the current fiber handles; each message has a fiber of its own.
const current = FiberRef.unsafeMake<RequestRecord | undefined>(undefined)

/** Notes the outcome of the request being handled, with the error kind and message of a refusal. */
export const noteOutcome = (outcome: RequestOutcome, kind?: string | undefined, reason?: string | undefined): Effect.Effect<void> =>
  Effect.map(FiberRef.get(current), (record) => {
    if (record === undefined) return
    record.outcome = outcome
    record.kind = kind
    record.reason = reason
  })

/** Notes what became of the request's reply. */
export const noteReply = (fate: ReplyFate): Effect.Effect<void> =>
  Effect.map(FiberRef.get(current), (record) => {
    if (record !== undefined) record.reply = fate
  })

const MAX_LOGGED_CHARS = 200

/** The sender's text, safe for one log field: escaped and at most 200 characters. */
export const logText = (text: string | undefined): string | undefined => (text === undefined ? undefined : toMqttString(text, MAX_LOGGED_CHARS))

const attribute = (message: IncomingMessage, name: string): string | undefined => {
  const value: unknown = message.properties.userProperties?.[name]
  return typeof value === "string" ? value : undefined
}

/** Type, scope and id of a request, also of one that did not decode (from its user properties). */
export const requestFields = (message: IncomingMessage) => {
  const event = Either.getOrUndefined(message.decoded)
  const subject = event?.subject ?? attribute(message, "subject")
  return {
    type: logText(event?.type ?? attribute(message, "type")) ?? "(none)",
    scope: logText(subject === undefined ? undefined : scopeOf({ subject })) ?? "(none)",
    id: logText(requestIdOf(message)) ?? "(none)"
  }
}

/**
 * Runs `handle` for one message and logs the line once it succeeded. `skip` tells results that
 * are no outcome yet (a message put aside to be handled again); a failure is retried by the worker,
 * which logs it itself.
 */
export const logRequest = <A, E, R>(message: IncomingMessage, handle: Effect.Effect<A, E, R>, skip: (result: A) => boolean) =>
  Effect.suspend(() => {
    const started = performance.now()
    const record: RequestRecord = { outcome: "processed", kind: undefined, reason: undefined, reply: "none" }
    return Effect.locally(handle, current, record).pipe(
      Effect.tap((result) =>
        skip(result)
          ? Effect.void
          : Effect.logInfo("job control request").pipe(
              Effect.annotateLogs({
                ...requestFields(message),
                outcome: record.outcome,
                ...(record.kind !== undefined ? { kind: logText(record.kind) } : {}),
                ...(record.reason !== undefined ? { reason: logText(record.reason) } : {}),
                reply: record.reply,
                durationMs: Math.round((performance.now() - started) * 10) / 10
              })
            )
      )
    )
  })
