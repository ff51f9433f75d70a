import { Context, Effect, Layer, Result, Tracer } from "effect"
import { mesOrigin, type Origin } from "@microdcs/job-state"
import type { ClaimAdmission, InvalidInput } from "@microdcs/store"
import type { JobControlFailure } from "./JobControlFailure.js"
import { type Answer, invalidRequest, toResult } from "./Answer.js"
import { admissionTarget, type Command, parsedRequest } from "./Command.js"
import type { ClaimedEvent } from "./Dedupe.js"
import { type DoneInWrite, doneThrough, rememberLast } from "./DoneInWrite.js"
import { JobControlOptions, type JobControlSettings } from "./JobControlOptions.js"
import { makeJobOrderMethods } from "./JobOrderMethods.js"
import { BadRequest } from "./Payload.js"
import { makeQueries } from "./Queries.js"
import { ERROR_REPLY_TYPE, type HandleResult, type JobControlRequest } from "./Request.js"
import { requestOperationId } from "./RequestOperation.js"
import { makeStationConfig } from "./StationConfig.js"
import { makeTriggerConfig, TRIGGER_CONFIG_EVENT_TYPE } from "./TriggerConfigEvent.js"

export type { JobControlFailure } from "./JobControlFailure.js"

/** The tracer of a runtime that installed none: its spans are recorded nowhere. */
const untraced = Tracer.nativeTracer

/**
 * The request's span, when a tracer is installed (an OpenTelemetry layer, say). Without one the
 * span would go nowhere, yet cost about 12 µs per request (a span, its fiber refs, its end),
 * so the hot path skips it. No call-site stack trace: capturing one costs an Error per request.
 */
const traced = <A, E, R>(effect: Effect.Effect<A, E, R>, request: JobControlRequest): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.tracer, (tracer) =>
    tracer === untraced
      ? effect
      : Effect.withSpan(effect, "JobControl.handle", { attributes: { type: request.type, subject: request.subject ?? "" }, captureStackTrace: false })
  )

/** The claim's admission reads, if they were made for the job order `command` would create. */
const admittedFor = (command: Command, claimed: ClaimedEvent<HandleResult> | undefined): ClaimAdmission | undefined => {
  const admission = claimed?.admission
  if (admission === undefined) return undefined
  const target = admissionTarget(command)
  return target !== undefined && target.id === admission.jobOrder.id && target.scope === admission.jobOrder.scope ? admission.read : undefined
}

/** Runs one parsed command: a job order method, a query or a station configuration. */
type Run = (
  command: Command,
  op: string,
  admitted: ClaimAdmission | undefined,
  origin: Origin,
  done: DoneInWrite<Answer> | undefined
) => Effect.Effect<Answer, InvalidInput | JobControlFailure>

/** A parsed request's command run, its answer as the reply of `replyType`; a refused value is INVALID_REQUEST. */
const runCommand = (run: Run, request: JobControlRequest, command: Command, replyType: string, claimed: ClaimedEvent<HandleResult> | undefined) => {
  // The result a done mark keeps is the very one returned.
  const result = rememberLast((answer: Answer) => toResult(replyType, answer))
  const done = claimed?.done === undefined ? undefined : doneThrough(claimed.done, result)
  return run(command, requestOperationId(request), admittedFor(command, claimed), request.origin ?? mesOrigin(request.source), done).pipe(
    // Stores validate before they write, so a refused value has written nothing.
    Effect.catchTag("InvalidInput", (e) => Effect.succeed(invalidRequest(new BadRequest({ kind: "InvalidInput", message: `${e.field}: ${e.message}` })))),
    Effect.map(result),
    (handled) => traced(handled, request)
  )
}

/**
 * The job-control processor: one request in, one reply and the status events
 * of what it changed out. It knows nothing of MQTT; the binding maps CloudEvents to
 * {@link JobControlRequest} and the result back.
 */
export class JobControl extends Context.Service<JobControl>()("@microdcs/job-control/JobControl", {
  make: Effect.gen(function* () {
    const methods = yield* makeJobOrderMethods
    const queries = yield* makeQueries
    const config = yield* makeStationConfig
    const triggerConfig = yield* makeTriggerConfig

    const run: Run = (command, op, admitted, origin, done) => {
      switch (command._tag) {
        case "JobOrderMethod":
          return methods.jobOrderMethod(command, op, origin, admitted, done)
        case "StateMethod":
          return methods.stateMethod(command, op, origin)
        case "ResponseByOrder":
          return queries.responseByOrder(command)
        case "ResponsesByState":
          return queries.responsesByState(command)
        default:
          return config.apply(command)
      }
    }

    /**
     * Processes one request. A request that cannot be processed as sent (unknown type, no
     * subject, malformed payload, a value the store refuses) is answered INVALID_REQUEST and
     * writes nothing: every check runs before the first write. `claimed`: what the request's
     * dedupe claim read for a Store or StoreAndStart (see `admissionTarget`), used when it was
     * read for this request's job order, and its done mark, which a Store or StoreAndStart lands
     * with its create (then the processing marks nothing after).
     */
    const handle = (request: JobControlRequest, claimed?: ClaimedEvent<HandleResult>): Effect.Effect<HandleResult, JobControlFailure> => {
      // Triggers are configuration of their own, not a station reference list.
      if (request.type === TRIGGER_CONFIG_EVENT_TYPE) return triggerConfig.handle(request)
      const parsed = parsedRequest(request)
      if (parsed === undefined) {
        const unknown = new BadRequest({ kind: "UnknownType", message: `'${request.type}' is not a job control or station configuration type` })
        return Effect.succeed(toResult(ERROR_REPLY_TYPE, invalidRequest(unknown)))
      }
      return Result.match(parsed.command, {
        onFailure: (bad) => Effect.succeed(toResult(parsed.replyType, invalidRequest(bad))),
        onSuccess: (command) => runCommand(run, request, command, parsed.replyType, claimed)
      })
    }

    return { handle } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}

/** The processor with the given settings; it still needs the store (`storeLayer` or `StoreServices` + `Valkey`). */
export const jobControlLayer = (settings: Partial<JobControlSettings> = {}) =>
  JobControl.Default.pipe(Layer.provide(JobControlOptions.layer(settings)))
