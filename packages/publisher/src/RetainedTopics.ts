import { Effect, type Either } from "effect"
import type { CloudEvent, InvalidTopic, MqttPublishError, PublishFailure } from "@microdcs/cloudevents-mqtt"
import type { PublisherContext } from "./PublisherContext.js"

const EMPTY = Buffer.alloc(0)

/**
 * Sets a retained topic: QoS 1, so it completes on PUBACK and a cursor saved afterwards never
 * runs ahead of what the broker holds. Every retained message expires (message expiry), so a
 * topic the publisher forgot to delete does not live forever.
 */
export const retain = (
  ctx: PublisherContext,
  topic: Either.Either<string, InvalidTopic>,
  event: CloudEvent
): Effect.Effect<void, PublishFailure> =>
  Effect.gen(function* () {
    const name = yield* topic
    yield* ctx.mqtt.publish(name, event, { qos: 1, retain: true, messageExpirySeconds: ctx.options.messageExpirySeconds })
    yield* ctx.stats.add("published")
  })

/** Deletes a retained topic with a zero-byte retained message (harmless when nothing is retained). */
export const unretain = (ctx: PublisherContext, topic: Either.Either<string, InvalidTopic>): Effect.Effect<void, InvalidTopic | MqttPublishError> =>
  Effect.gen(function* () {
    const name = yield* topic
    yield* ctx.mqtt.publishRaw(name, EMPTY, { qos: 1, retain: true })
    yield* ctx.stats.add("deleted")
  })
