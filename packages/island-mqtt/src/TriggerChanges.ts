import { Duration, Effect, Result, Layer, Stream } from "effect"
import { type InvalidTopic, makeCloudEvent, MqttConnection, type TopicConfig, validateLevel, validateLevels } from "@microdcs/cloudevents-mqtt"
import { type TriggerChange, TriggerChangeAnnouncer, TriggerCatalog } from "@microdcs/job-control"

/** The CloudEvent every instance listens to, besides the nudge, to reload its triggers. */
export const TRIGGERS_CHANGED_TYPE = "dag.triggers.changed" as const

/**
 * `P[/D]/triggers`: where trigger edits are announced. A topic of its own, beside the metadata,
 * so no scope's events topic (`P/{scope}/events`) can be mistaken for it.
 */
export const triggerChangesTopic = (config: TopicConfig): Result.Result<string, InvalidTopic> =>
  Result.gen(function* () {
    const prefix = yield* validateLevels("prefix", config.prefix)
    const tail = config.discriminator === undefined ? "" : `/${yield* validateLevel("discriminator", config.discriminator)}`
    return `${prefix}${tail}/triggers`
  })

export interface TriggerAnnouncerOptions {
  readonly topics: TopicConfig
  /** Our CloudEvent `source`. */
  readonly source: string
  /** How long an announcement may wait for its PUBACK before it is given up (default 2 s). */
  readonly timeoutMs?: number | undefined
  /** Told about every announcement that was not sent (for metrics). */
  readonly onDropped?: ((reason: string) => void) | undefined
}

/**
 * Announces a trigger edit as `dag.triggers.changed` (QoS 1, not retained) on
 * {@link triggerChangesTopic}. Best effort: a broker that is down or slow only costs the edit a
 * warning, never its success; the nudge and the periodic refresh still reach every instance.
 */
export const MqttTriggerAnnouncer = (options: TriggerAnnouncerOptions) =>
  Layer.effect(
    TriggerChangeAnnouncer,
    Effect.gen(function* () {
      const mqtt = yield* MqttConnection
      const topic = yield* Effect.fromResult(triggerChangesTopic(options.topics))
      const timeout = Duration.millis(options.timeoutMs ?? 2_000)
      type Dropped = { readonly _tag: string; readonly message: string }
      const publish = (change: TriggerChange): Effect.Effect<void, Dropped> =>
        Effect.flatMap(mqtt.status, (status): Effect.Effect<void, Dropped> =>
          // Not even tried while the connection is away: a QoS 1 publish left in flight would also
          // hold up the connection's close.
          status === "connected"
            ? mqtt.publish(topic, makeCloudEvent({ source: options.source, type: TRIGGERS_CHANGED_TYPE, subject: change.scope, data: change }), { qos: 1 })
            : Effect.fail({ _tag: "Disconnected", message: `the MQTT connection is ${status}` })
        )
      const announce = (change: TriggerChange): Effect.Effect<void> =>
        publish(change)
          .pipe(
            Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail<Dropped>({ _tag: "Timeout", message: `no PUBACK within ${Duration.format(timeout)}` }) }),
            Effect.catch((error) =>
              Effect.sync(() => options.onDropped?.(error._tag)).pipe(
                Effect.andThen(Effect.logWarning("trigger change not announced on MQTT; the nudge and the refresh still carry it")),
                Effect.annotateLogs({ trigger: change.id, error: error.message })
              )
            )
          )
      return { announce }
    })
  )

/**
 * Reloads the trigger catalog on every `dag.triggers.changed` (from any instance, the admin's
 * tools included). Not shared and not kept in the session: every instance needs each one, and one
 * missed while away is covered by the load at start.
 */
export const runTriggerChangesListener = (options: { readonly topics: TopicConfig }) =>
  Effect.gen(function* () {
    const mqtt = yield* MqttConnection
    const catalog = yield* TriggerCatalog
    const changes = yield* mqtt.subscribe(yield* Effect.fromResult(triggerChangesTopic(options.topics)), { qos: 1 })
    yield* changes.pipe(
      Stream.runForEach((message) =>
        Effect.gen(function* () {
          if (Result.isSuccess(message.decoded) && message.decoded.success.type === TRIGGERS_CHANGED_TYPE) yield* catalog.changed
          yield* message.ack
        })
      ),
      Effect.forkScoped
    )
  })

export const TriggerChangesListener = (options: { readonly topics: TopicConfig }) => Layer.effectDiscard(runTriggerChangesListener(options))
