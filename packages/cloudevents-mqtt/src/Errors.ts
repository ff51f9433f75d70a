import { Data } from "effect"

/**
 * The failures a caller of this package can act on. Anything else (a bug, an mqtt.js change that
 * removed an API we rely on) is a defect, not an error type.
 */

/**
 * Why a message is not a CloudEvent we accept (bad input). The daemon acknowledges
 * such a message, writes nothing and, where a response topic exists, replies with the kind.
 */
export type CodecErrorKind =
  /** The payload is over the size limit (default 256 KiB). */
  | "too-large"
  /** The content type is neither JSON nor MessagePack (structured mode included). */
  | "content-type"
  /** The payload does not parse (or, when encoding, the data does not serialise). */
  | "payload"
  /** Correlation data that is not exactly the 16 bytes of a UUID. */
  | "correlation"
  /** A required attribute is missing or an attribute is malformed. */
  | "attributes"

/** A received message that is not an acceptable binary-mode CloudEvent. */
export class DecodeError extends Data.TaggedError("DecodeError")<{
  readonly kind: CodecErrorKind
  readonly message: string
}> {}

/** An event we were asked to send that cannot travel as a binary-mode CloudEvent; nothing was sent. */
export class EncodeError extends Data.TaggedError("EncodeError")<{
  readonly kind: CodecErrorKind
  readonly message: string
}> {}

/** A topic, filter, topic part or client id that MQTT would refuse or misread; nothing was sent. */
export class InvalidTopic extends Data.TaggedError("InvalidTopic")<{
  /** Which part was bad: `prefix`, `discriminator`, `subject`, `group`, `topic`, `filter`, ... */
  readonly part: string
  readonly value: string
  readonly message: string
}> {}

/** The first connection to the broker did not come up (refused, timed out, not authorised). */
export class MqttConnectError extends Data.TaggedError("MqttConnectError")<{
  /** The broker URL without credentials. */
  readonly url: string
  readonly message: string
}> {}

/**
 * A publish did not complete.
 * - `timeout`: no PUBACK in time; the message may still be delivered (mqtt.js keeps it and resends
 *   after a reconnect), so treat the outcome as unknown and stay idempotent.
 * - `rejected`: the broker answered with an error reason code (`reasonCode`, e.g. 135 not
 *   authorized), or mqtt.js refused the packet. Sending the same message again gets the same
 *   answer, so do not retry it.
 * - `closed`: the connection is being closed; the message was not sent.
 */
export class MqttPublishError extends Data.TaggedError("MqttPublishError")<{
  readonly topic: string
  readonly reason: "timeout" | "rejected" | "closed"
  readonly message: string
  /** The PUBACK reason code (0x80 or above) when the broker refused the message. */
  readonly reasonCode?: number | undefined
}> {}

/**
 * A message whose PUBLISH packet is larger than the Maximum Packet Size the broker announced in its
 * CONNACK (`limit`, read at each connect); nothing was sent. The broker would drop the connection
 * for it (reason 0x95), and a resend after the reconnect would drop it again: sending the same
 * message again gets the same answer, so do not retry it; send something smaller instead.
 */
export class MessageTooLarge extends Data.TaggedError("MessageTooLarge")<{
  readonly topic: string
  /** The size of its PUBLISH packet: topic, properties and payload. */
  readonly bytes: number
  readonly limit: number
  readonly message: string
}> {}

/** {@link MessageTooLarge} with its message. */
export const messageTooLarge = (topic: string, bytes: number, limit: number): MessageTooLarge =>
  new MessageTooLarge({ topic, bytes, limit, message: `message of ${bytes} bytes is over the broker's maximum packet size of ${limit} bytes; not sent` })

/** The broker refused a subscription (SUBACK failure code) or the SUBSCRIBE did not complete. */
export class MqttSubscribeError extends Data.TaggedError("MqttSubscribeError")<{
  readonly filter: string
  readonly message: string
}> {}
