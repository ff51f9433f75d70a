import { randomUUID } from "node:crypto"
import { Deferred, Effect, Result, Stream } from "effect"
import { makeCloudEvent, makeMqttConnection } from "@microdcs/cloudevents-mqtt"
import { MethodEventTypes } from "@microdcs/job-state"
import { LOAD_SCOPE as SCOPE } from "./LoadIsland.js"

/** An MES on one connection: a method call is a publish with our response topic, then its reply. */
export const makeMes = (url: string, prefix: string) =>
  Effect.gen(function* () {
    const mqtt = yield* makeMqttConnection({ url, clientIdBase: "bench-mes", receiveMaximum: 100 })
    const replyTopic = `${prefix}/replies/bench-mes`
    const pending = new Map<string, Deferred.Deferred<number>>()
    const replies = yield* mqtt.subscribe(replyTopic)
    yield* replies.pipe(
      Stream.runForEach((reply) => {
        const decoded = Result.getOrUndefined(reply.decoded)
        const waiter = decoded ? pending.get(decoded.extensions["correlationid"] ?? "") : undefined
        const status = Number((decoded?.data as { ReturnStatus?: number } | undefined)?.ReturnStatus)
        return (waiter ? Deferred.succeed(waiter, status) : Effect.void).pipe(Effect.andThen(reply.ack))
      }),
      Effect.forkScoped
    )
    const request = (topic: string, type: string, data: unknown) =>
      Effect.gen(function* () {
        const correlationId = randomUUID()
        const done = yield* Deferred.make<number>()
        pending.set(correlationId, done)
        const event = makeCloudEvent({ source: "urn:bench:mes", type, subject: SCOPE, data })
        yield* mqtt.publish(topic, event, { responseTopic: replyTopic, correlationId })
        const status = yield* Deferred.await(done)
        pending.delete(correlationId)
        if (status !== 1) return yield* Effect.die(new Error(`${type} answered ReturnStatus ${status}`))
      })
    const call = (method: "Store" | "Start" | "StoreAndStart" | "Clear", data: unknown) => request(`${prefix}/${SCOPE}/commands`, MethodEventTypes[method], data)
    return { call, request } as const
  })
