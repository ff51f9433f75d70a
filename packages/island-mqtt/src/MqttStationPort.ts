import { Effect, FiberSet, Result, Layer } from "effect"
import { type CloudEvent, type InvalidTopic, makeCloudEvent, type MessageTooLarge, MqttConnection, responseTopic } from "@microdcs/cloudevents-mqtt"
import type { CommandEntry } from "@microdcs/sfc"
import { CommandNotSent, SfcEvents, StationPort } from "@microdcs/sfc-runtime"
import { stationCommandTopic, type StationTopicConfig } from "@microdcs/cloudevents-mqtt"

export interface MqttStationOptions {
  /** Prefix, discriminator and station level of the station topics (see `stationCommandTopic` in `@microdcs/cloudevents-mqtt`). */
  readonly topics: StationTopicConfig
  /** This instance's id: without a shared group, station replies come back on `P/replies/{instanceId}`, to this instance only. */
  readonly instanceId: string
  /**
   * The island's shared-subscription group (as for job control). With it, every instance sends
   * its commands with the reply topic `P/replies/{group}` and takes its share of the replies
   * through `$share/{group}/…`, so a reply to a command whose sender is
   * restarting (or gone) reaches a live instance. Give the connections a session expiry of 0:
   * while a stopped member's session lasts, the broker keeps handing it a share.
   */
  readonly sharedGroup?: string | undefined
  /** Our CloudEvent `source` on commands. */
  readonly source: string
}

/**
 * A push command as a CloudEvent: type = the action's TypeId, data = its
 * Parameters, subject = the scope, `correlationid` = the command's correlation id (a UUID, so it
 * travels as the 16 bytes of Correlation Data), and the extensions `jobid`, `action` and
 * `attempt`. The id is `{correlationId}.{attempt}`: a redelivered outbox entry sends the same
 * event again, and a resend after a timeout is a new event with the same correlation id.
 */
export const commandEvent = (source: string, command: CommandEntry): CloudEvent =>
  makeCloudEvent({
    id: `${command.correlationId}.${command.attempt}`,
    source,
    type: command.typeId,
    subject: command.subject,
    data: command.parameters,
    correlationid: command.correlationId,
    extensions: { jobid: command.jobId, action: command.action, attempt: String(command.attempt) }
  })

/**
 * Where stations send their replies: with a shared group the group's `P/replies/{group}`, which
 * any instance may answer (replies are routed by correlation id through Valkey), otherwise this
 * instance's `P/replies/{instanceId}`.
 */
export const stationReplyTopic = (options: MqttStationOptions): Result.Result<string, InvalidTopic> =>
  responseTopic(options.topics, options.sharedGroup ?? options.instanceId)

/**
 * The station's answer to a command over the broker's Maximum Packet Size, given by the island
 * itself: a failed reply, so the action fails with the reason (both sizes) instead of being sent
 * again and again. Its id is fixed per attempt, so a redelivered outbox entry ingests it once.
 */
const tooLargeFailure = (options: MqttStationOptions, command: CommandEntry, error: MessageTooLarge) => ({
  scope: command.subject,
  source: options.source,
  id: `${command.correlationId}.${command.attempt}.too-large`,
  type: `${command.typeId}.reply`,
  correlationId: command.correlationId,
  error: `command not sent: ${error.bytes} bytes, over the broker's maximum packet size of ${error.limit} bytes`
})

/**
 * The SFC engine's `StationPort` over MQTT: publishes each push command (QoS 1, done on PUBACK)
 * to `P/S/{scope}[/D]/command` with the {@link stationReplyTopic} as its response topic. Any failure is a
 * `CommandNotSent`, so the outbox entry stays pending and is sent again; but a command over the
 * broker's Maximum Packet Size would be refused every time: it fails its action instead
 * ({@link tooLargeFailure}, ingested in a fiber of its own as a station's reply would be, later).
 */
export const makeMqttStationPort = (options: MqttStationOptions) =>
  Effect.gen(function* () {
    const mqtt = yield* MqttConnection
    const events = yield* SfcEvents
    const runFailure = yield* FiberSet.runtime(yield* FiberSet.make())<never>()
    const replies = yield* Effect.fromResult(stationReplyTopic(options))
    const failTooLarge = (command: CommandEntry, error: MessageTooLarge) =>
      Effect.sync(() =>
        runFailure(
          events.ingest(tooLargeFailure(options, command, error)).pipe(Effect.catchCause((cause) => Effect.logWarning("station command too large: its failure not recorded", cause)))
        )
      ).pipe(
        Effect.andThen(Effect.logError("station command over the broker's maximum packet size; not sent, its action fails")),
        Effect.annotateLogs({ jobId: command.jobId, action: command.action, bytes: error.bytes, limit: error.limit })
      )
    const send = (command: CommandEntry) =>
      Effect.gen(function* () {
        const topic = yield* Effect.fromResult(stationCommandTopic(options.topics, command.subject))
        yield* mqtt.publish(topic, commandEvent(options.source, command), { qos: 1, responseTopic: replies })
      }).pipe(
        Effect.catchTag("MessageTooLarge", (error) => failTooLarge(command, error)),
        Effect.mapError((error) => new CommandNotSent({ correlationId: command.correlationId, message: error.message }))
      )
    return StationPort.of({ send })
  })

/** {@link makeMqttStationPort} as a layer. Pair it with `StationIngress`, which receives the replies. */
export const MqttStationPort = (options: MqttStationOptions) => Layer.effect(StationPort, makeMqttStationPort(options))

