import { Effect, LogLevel, References, Result } from "effect"
import { type IncomingMessage, requestIdOf, scopeOf, toMqttString } from "@microdcs/cloudevents-mqtt"

/**
 * One log line per job control request that was handled or refused (type, scope, id, outcome,
 * duration), as structured log annotations: at debug level for a request answered as asked (a
 * line per request is noise at hundreds per second, and its formatting and write cost CPU on the
 * hot path), at info for a refusal of any kind. The type, scope and id are the sender's text:
 * they are escaped and cut short, so a hostile request cannot forge log lines or flood the log.
 */

/** What became of a request: done, refused as bad input, a duplicate, or done after its lease ran out. */
export type RequestOutcome = "processed" | "refused" | "duplicate" | "lease-lost"

/** What became of its reply: sent, dropped (the broker or the topic refused it), or none to send. */
export type ReplyFate = "sent" | "dropped" | "none"

/**
 * What the handler noted about the request it handles, for its log line. Handed to the handler
 * as a plain value rather than kept in a fiber reference: `Effect.provideService` and a reference
 * read per note cost more per request than the rest of the bookkeeping.
 */
export interface RequestRecord {
  outcome: RequestOutcome
  kind: string | undefined
  reason: string | undefined
  reply: ReplyFate
}

/** Notes the outcome of the request being handled, with the error kind and message of a refusal. */
export const noteOutcome = (record: RequestRecord, outcome: RequestOutcome, kind?: string | undefined, reason?: string | undefined): void => {
  record.outcome = outcome
  record.kind = kind
  record.reason = reason
}

/** Notes what became of the request's reply. */
export const noteReply = (record: RequestRecord, fate: ReplyFate): void => {
  record.reply = fate
}

const MAX_LOGGED_CHARS = 200

/** The sender's text, safe for one log field: escaped and at most 200 characters. */
export const logText = (text: string | undefined): string | undefined => (text === undefined ? undefined : toMqttString(text, MAX_LOGGED_CHARS))

const attribute = (message: IncomingMessage, name: string): string | undefined => {
  const value: unknown = message.properties.userProperties?.[name]
  return typeof value === "string" ? value : undefined
}

/** Type, scope and id of a request, also of one that did not decode (from its user properties). */
export const requestFields = (message: IncomingMessage) => {
  const event = Result.getOrUndefined(message.decoded)
  const subject = event?.subject ?? attribute(message, "subject")
  return {
    type: logText(event?.type ?? attribute(message, "type")) ?? "(none)",
    scope: logText(subject === undefined ? undefined : scopeOf({ subject })) ?? "(none)",
    id: logText(requestIdOf(message)) ?? "(none)"
  }
}

/** Debug for a request answered as asked (processed or a duplicate, no refusal), info otherwise. */
const requestLogLevel = (record: Pick<RequestRecord, "outcome" | "kind">): LogLevel.Severity =>
  (record.outcome === "processed" || record.outcome === "duplicate") && record.kind === undefined ? "Debug" : "Info"

/**
 * Runs `handle` for one message and logs the line once it succeeded. `skip` tells results that
 * are no outcome yet (a message put aside to be handled again); a failure is retried by the worker,
 * which logs it itself. A line below the minimum log level is not even built.
 */
export const logRequest = <A, E, R>(message: IncomingMessage, handle: (record: RequestRecord) => Effect.Effect<A, E, R>, skip: (result: A) => boolean) =>
  Effect.suspend(() => {
    const started = performance.now()
    const record: RequestRecord = { outcome: "processed", kind: undefined, reason: undefined, reply: "none" }
    return handle(record).pipe(
      Effect.tap((result) => {
        if (skip(result)) return Effect.void
        const level = requestLogLevel(record)
        return References.MinimumLogLevel.use((minimum) =>
          LogLevel.isLessThan(level, minimum)
            ? Effect.void
            : Effect.logWithLevel(level)("job control request").pipe(
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
      })
    )
  })
