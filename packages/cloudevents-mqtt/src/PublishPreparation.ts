import { Result } from "effect"
import type { IClientPublishOptions } from "mqtt"
import { encode, type PublishProperties } from "./Binary.js"
import type { CloudEvent } from "./CloudEvent.js"
import { type EncodeError, type InvalidTopic, type MessageTooLarge, MqttPublishError } from "./Errors.js"
import type { IncomingMessage } from "./Incoming.js"
import { mqttStringProblem, toMqttString } from "./MqttString.js"
import { prepareReply } from "./Reply.js"
import { validateResponseTopic, validateTopicName } from "./Topics.js"

/** A message made ready for the client: its topic and options checked, the event encoded, nothing sent. */

export interface PublishOptions {
  /** Default 1. */
  readonly qos?: 0 | 1 | 2 | undefined
  readonly retain?: boolean | undefined
  /** MQTT Message Expiry Interval: the broker drops the message (retained copy included) after this long. */
  readonly messageExpirySeconds?: number | undefined
  readonly responseTopic?: string | undefined
  /** Sets the `correlationid` extension (a UUID), carried as Correlation Data. */
  readonly correlationId?: string | undefined
}

export interface PublishRawOptions {
  readonly qos?: 0 | 1 | 2 | undefined
  readonly retain?: boolean | undefined
  readonly properties?: PublishProperties | undefined
}

export type PublishFailure = InvalidTopic | EncodeError | MqttPublishError | MessageTooLarge

/** A message ready for the client: checked and encoded. */
export interface Prepared {
  readonly topic: string
  readonly payload: Buffer
  readonly options: IClientPublishOptions
}

/** The first string of raw properties that mosquitto would refuse (and drop the connection for), if any. */
export const propertiesProblem = (properties: PublishProperties): string | undefined => {
  const named: Array<[string, string]> = []
  if (properties.contentType !== undefined) named.push(["content type", properties.contentType])
  if (properties.responseTopic !== undefined) named.push(["response topic", properties.responseTopic])
  for (const [name, value] of Object.entries(properties.userProperties ?? {})) {
    named.push(["user property name", name])
    for (const text of [value].flat()) named.push([`user property ${toMqttString(name, 100)}`, String(text)])
  }
  for (const [what, text] of named) {
    const problem = mqttStringProblem(text)
    if (problem) return `${what} ${problem}`
  }
  return undefined
}

const expiryProperty = (topic: string, seconds: number | undefined): Result.Result<{ messageExpiryInterval?: number }, MqttPublishError> =>
  seconds === undefined
    ? Result.succeed({})
    : Number.isInteger(seconds) && seconds > 0 && seconds <= 0xffffffff
      ? Result.succeed({ messageExpiryInterval: seconds })
      : Result.fail(new MqttPublishError({ topic, reason: "rejected", message: `messageExpirySeconds must be an integer from 1 to 4294967295, not ${seconds}` }))

// Both run for every message sent: plain code with early returns, no generator per call.

/** A publish checked and encoded, synchronously: nothing has been sent yet. */
export const preparePublish = (
  maxPayloadBytes: number,
  topic: string,
  event: CloudEvent,
  opts: PublishOptions = {}
): Result.Result<Prepared, PublishFailure> => {
  const topicChecked = validateTopicName(topic)
  if (Result.isFailure(topicChecked)) return Result.fail(topicChecked.failure)
  if (opts.responseTopic !== undefined) {
    const responseChecked = validateTopicName(opts.responseTopic)
    if (Result.isFailure(responseChecked)) return Result.fail(responseChecked.failure)
  }
  const withCorrelation =
    opts.correlationId === undefined ? event : { ...event, extensions: { ...event.extensions, correlationid: opts.correlationId } }
  const encoded = encode(withCorrelation, { maxPayloadBytes })
  if (Result.isFailure(encoded)) return Result.fail(encoded.failure)
  const expiry = expiryProperty(topic, opts.messageExpirySeconds)
  if (Result.isFailure(expiry)) return Result.fail(expiry.failure)
  return Result.succeed({
    topic,
    payload: encoded.success.payload,
    options: {
      qos: opts.qos ?? 1,
      retain: opts.retain ?? false,
      properties: { ...encoded.success.properties, ...expiry.success, ...(opts.responseTopic !== undefined ? { responseTopic: opts.responseTopic } : {}) }
    }
  })
}

/** A reply checked and encoded; `undefined` when the request has no response topic. */
export const prepareReplyTo = (
  maxPayloadBytes: number,
  request: IncomingMessage,
  event: CloudEvent
): Result.Result<Prepared | undefined, PublishFailure> => {
  const responseTopic = request.responseTopic
  if (responseTopic === undefined) return Result.succeed(undefined)
  const checked = validateResponseTopic(responseTopic)
  if (Result.isFailure(checked)) return Result.fail(checked.failure)
  const prepared = prepareReply(request, event)
  const encoded = encode(prepared.event, { maxPayloadBytes, correlationData: prepared.correlationData })
  if (Result.isFailure(encoded)) return Result.fail(encoded.failure)
  return Result.succeed({ topic: responseTopic, payload: encoded.success.payload, options: { qos: 1, retain: false, properties: encoded.success.properties } })
}
