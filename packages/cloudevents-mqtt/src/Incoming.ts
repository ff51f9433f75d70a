import type { Effect, Result } from "effect"
import type { PublishProperties } from "./Binary.js"
import type { CloudEvent } from "./CloudEvent.js"
import type { DecodeError } from "./Errors.js"

/**
 * One received message. `decoded` is the CloudEvent or why the message is not one; the raw
 * payload and properties stay available for logs and error replies.
 *
 * For QoS 1 the broker gets its PUBACK only when `ack` runs, so a consumer can claim, process and
 * mark done first. `ack` runs at most once; an ack after the connection was lost is dropped (the
 * broker redelivers the message in the resumed session, with `dup` set). For QoS 0 `ack` does nothing.
 */
export interface IncomingMessage {
  readonly topic: string
  readonly decoded: Result.Result<CloudEvent, DecodeError>
  readonly responseTopic?: string | undefined
  /** Raw MQTT Correlation Data, as received (a reply echoes it verbatim). */
  readonly correlationData?: Buffer | undefined
  readonly payload: Buffer
  readonly properties: PublishProperties
  readonly qos: 0 | 1 | 2
  readonly retain: boolean
  /** A redelivery: the broker sent it before and got no PUBACK. */
  readonly dup: boolean
  readonly ack: Effect.Effect<void>
}
