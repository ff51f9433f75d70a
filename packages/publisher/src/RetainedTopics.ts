import { Duration, Effect, Result, Option, Stream } from "effect"
import type { CloudEvent, InvalidTopic, MessageTooLarge, MqttPublishError, MqttSubscribeError, PublishFailure } from "@microdcs/cloudevents-mqtt"
import type { PublisherContext } from "./PublisherContext.js"

const EMPTY = Buffer.alloc(0)

/**
 * A message over the broker's Maximum Packet Size was not sent (the broker would have dropped the
 * connection for it): logged and counted. It still fails, so its caller skips what depends on it;
 * the topic keeps what it held, and the same content would be refused again, so no retry helps.
 */
const countTooLarge = (ctx: PublisherContext) => (error: PublishFailure) =>
  error._tag !== "MessageTooLarge"
    ? Effect.void
    : Effect.andThen(
        ctx.stats.add("tooLarge"),
        Effect.logError("publisher: message over the broker's maximum packet size; not published").pipe(
          Effect.annotateLogs({ topic: error.topic, bytes: error.bytes, limit: error.limit })
        )
      )

/**
 * Sets a retained topic: QoS 1, so it completes on PUBACK and a cursor saved afterwards never
 * runs ahead of what the broker holds. Every retained message expires (message expiry), so a
 * topic the publisher forgot to delete does not live forever.
 */
export const retain = (
  ctx: PublisherContext,
  topic: Result.Result<string, InvalidTopic>,
  event: CloudEvent
): Effect.Effect<void, PublishFailure> =>
  Effect.gen(function* () {
    const name = yield* Effect.fromResult(topic)
    yield* ctx.mqtt.publish(name, event, { qos: 1, retain: true, messageExpirySeconds: ctx.options.messageExpirySeconds }).pipe(Effect.tapError(countTooLarge(ctx)))
    yield* ctx.stats.add("published")
  })

/** Deletes a retained topic with a zero-byte retained message (harmless when nothing is retained). */
export const unretain = (
  ctx: PublisherContext,
  topic: Result.Result<string, InvalidTopic>
): Effect.Effect<void, InvalidTopic | MqttPublishError | MessageTooLarge> =>
  Effect.gen(function* () {
    const name = yield* Effect.fromResult(topic)
    yield* ctx.mqtt.publishRaw(name, EMPTY, { qos: 1, retain: true })
    yield* ctx.stats.add("deleted")
  })

/**
 * Sets a retained topic and returns what it held before, when that is known. It subscribes to
 * the topic first: the broker sends the retained message at SUBSCRIBE, and forwards our own
 * publish after it without the retain flag, so whatever came with the flag before our copy was
 * the old message. None when nothing was retained, or when our copy does not come back in time.
 */
export const retainReplacing = (
  ctx: PublisherContext,
  topic: Result.Result<string, InvalidTopic>,
  event: CloudEvent
): Effect.Effect<Option.Option<CloudEvent>, PublishFailure | MqttSubscribeError> =>
  Effect.gen(function* () {
    const name = yield* Effect.fromResult(topic)
    const messages = yield* ctx.mqtt.subscribe(name, { qos: 1 })
    yield* retain(ctx, topic, event)
    const seen = yield* messages.pipe(
      Stream.tap((m) => m.ack),
      Stream.takeUntil((m) => !m.retain),
      Stream.runCollect,
      Effect.timeout(Duration.seconds(5)),
      Effect.option
    )
    if (Option.isNone(seen)) {
      yield* Effect.logWarning("publisher: cannot tell what the topic held before").pipe(Effect.annotateLogs({ topic: name }))
      return Option.none()
    }
    const previous = Option.fromUndefinedOr(seen.value.find((m) => m.retain))
    return Option.flatMap(previous, (m) => Result.getSuccess(m.decoded))
  }).pipe(Effect.scoped)
