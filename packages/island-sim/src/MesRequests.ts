import { randomUUID } from "node:crypto"
import { Data, Deferred, Effect, Result, type Scope, Stream } from "effect"
import {
  type CloudEvent,
  commandTopic,
  type InvalidTopic,
  makeCloudEvent,
  type MqttConnectionService,
  type MqttSubscribeError,
  responseTopic,
  type TopicConfig
} from "@microdcs/cloudevents-mqtt"
import { ReturnStatus } from "@microdcs/job-state"

/** A request that got no reply in time, or could not be sent. */
export class RequestUnanswered extends Data.TaggedError("RequestUnanswered")<{
  readonly type: string
  readonly reason: string
}> {}

export interface Requester {
  /** Sends a request to the scope's command topic and waits for its reply. */
  readonly request: (type: string, data: unknown, extensions?: Readonly<Record<string, string>>) => Effect.Effect<CloudEvent, RequestUnanswered>
}

/** Why a reply is not NO_ERROR (its error message, else its data), or undefined when it is. */
export const refusalOf = (reply: CloudEvent): string | undefined => {
  const status = (reply.data as { readonly ReturnStatus?: unknown } | undefined)?.ReturnStatus
  if (status === ReturnStatus.NO_ERROR) return undefined
  return reply.extensions["mdcserrormessage"] ?? `ReturnStatus ${JSON.stringify(status)}: ${JSON.stringify(reply.data)}`
}

/**
 * Requests of an MES to one scope, each with the MES's own response topic and a correlation id;
 * a reply completes its request's Deferred, found by the echoed correlation data.
 */
export const makeRequester = (
  mqtt: MqttConnectionService,
  topics: TopicConfig,
  scope: string,
  options: { readonly source: string; readonly timeoutMs: number }
): Effect.Effect<Requester, InvalidTopic | MqttSubscribeError, Scope.Scope> =>
  Effect.gen(function* () {
    const target = yield* Effect.fromResult(commandTopic(topics, scope))
    const replyTopic = yield* Effect.fromResult(responseTopic(topics, `island-sim-mes-${randomUUID().slice(0, 8)}`))
    const waiting = new Map<string, Deferred.Deferred<CloudEvent>>()
    yield* (yield* mqtt.subscribe(replyTopic, { qos: 1 })).pipe(
      Stream.runForEach((m) =>
        Effect.sync(() => {
          const key = m.correlationData?.toString("hex")
          const reply = key === undefined ? undefined : waiting.get(key)
          if (reply !== undefined && Result.isSuccess(m.decoded)) Deferred.doneUnsafe(reply, Effect.succeed(m.decoded.success))
        }).pipe(Effect.andThen(m.ack))
      ),
      Effect.forkScoped
    )
    const request = (type: string, data: unknown, extensions: Readonly<Record<string, string>> = {}) =>
      Effect.suspend(() => {
        const correlationId = randomUUID()
        const key = correlationId.replaceAll("-", "")
        const reply = Deferred.makeUnsafe<CloudEvent>()
        waiting.set(key, reply)
        const event = makeCloudEvent({ source: options.source, type, subject: scope, data, extensions })
        return mqtt.publish(target, event, { qos: 1, responseTopic: replyTopic, correlationId }).pipe(
          Effect.mapError((error) => new RequestUnanswered({ type, reason: `not sent: ${error.message}` })),
          Effect.andThen(Deferred.await(reply)),
          Effect.timeoutOrElse({
            duration: options.timeoutMs,
            orElse: () => Effect.fail(new RequestUnanswered({ type, reason: `no reply within ${options.timeoutMs} ms` }))
          }),
          Effect.ensuring(Effect.sync(() => waiting.delete(key)))
        )
      })
    return { request }
  })
