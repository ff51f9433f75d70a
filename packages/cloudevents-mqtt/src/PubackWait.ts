import { Duration, Effect } from "effect"
import { type MessageTooLarge, messageTooLarge, MqttPublishError } from "./Errors.js"
import type { LiveClient } from "./MqttClient.js"
import { publishPacketBytes } from "./PacketSize.js"
import type { Prepared } from "./PublishPreparation.js"
import { gatherTurnWrites } from "./TurnWrites.js"

/**
 * Sending prepared messages and waiting for their PUBACKs. The PUBACK timeout is a timer inside
 * the one async step, not `Effect.timeoutOrElse`: that races a second fiber on every publish, which
 * cost more than the publish itself. A batch shares the step and the timer: the messages go out
 * together and are waited for together.
 */

export interface PublishSender {
  readonly live: LiveClient
  readonly publishTimeout: Duration.Duration
  /** Publishes waiting for their PUBACK: failed with `closed` when the connection is released. */
  readonly pending: Set<() => void>
  released: boolean
}

type Outcomes = ReadonlyArray<MqttPublishError | undefined>

/** What became of each message of a batch: `undefined` once its PUBACK came. */
export type SendOutcomes = ReadonlyArray<MqttPublishError | MessageTooLarge | undefined>

/** One batch waiting for its PUBACKs: settled message by message, resumed once every one is. */
interface BatchWait {
  readonly batch: ReadonlyArray<Prepared>
  readonly outcomes: Array<MqttPublishError | undefined>
  readonly settledAt: Array<boolean>
  readonly resume: (effect: Effect.Effect<Outcomes>) => void
  open: number
  finished: boolean
  timer: ReturnType<typeof setTimeout> | undefined
  onClose: () => void
}

export const makePublishSender = (live: LiveClient, publishTimeout: Duration.Duration): PublishSender => ({
  live,
  publishTimeout,
  pending: new Set<() => void>(),
  released: false
})

/** Runs before the client's own release: a publish still waiting for its PUBACK fails with `closed` at once. */
export const releaseSender = (sender: PublishSender) => {
  sender.released = true
  for (const fail of [...sender.pending]) fail()
  sender.pending.clear()
}

/** mqtt.js reports a PUBACK failure as an error with the reason code in `code`. */
const reasonCodeOf = (error: Error): number | undefined => {
  const code: unknown = (error as { code?: unknown }).code
  return typeof code === "number" && code >= 0x80 ? code : undefined
}

const endWait = (sender: PublishSender, wait: BatchWait) => {
  wait.finished = true
  clearTimeout(wait.timer)
  sender.pending.delete(wait.onClose)
}

const settle = (sender: PublishSender, wait: BatchWait, i: number, error: MqttPublishError | undefined) => {
  if (wait.finished || wait.settledAt[i]) return
  wait.settledAt[i] = true
  wait.outcomes[i] = error
  if (--wait.open > 0) return
  endWait(sender, wait)
  wait.resume(Effect.succeed(wait.outcomes))
}

const settleUnsettled = (sender: PublishSender, wait: BatchWait, error: (topic: string) => MqttPublishError) => {
  for (let i = 0; i < wait.batch.length; i++) if (!wait.settledAt[i]) settle(sender, wait, i, error(wait.batch[i]!.topic))
}

const startWait = (sender: PublishSender, batch: ReadonlyArray<Prepared>, resume: BatchWait["resume"]): BatchWait => {
  const { publishTimeout } = sender
  const wait: BatchWait = {
    batch,
    outcomes: batch.map(() => undefined),
    settledAt: batch.map(() => false),
    resume,
    open: batch.length,
    finished: false,
    timer: undefined,
    onClose: () => settleUnsettled(sender, wait, (topic) => new MqttPublishError({ topic, reason: "closed", message: "connection closed before the PUBACK" }))
  }
  wait.timer = setTimeout(
    () => settleUnsettled(sender, wait, (topic) => new MqttPublishError({ topic, reason: "timeout", message: `no PUBACK within ${Duration.format(publishTimeout)}` })),
    Duration.toMillis(publishTimeout)
  )
  sender.pending.add(wait.onClose)
  return wait
}

const publishErrorOf = (live: LiveClient, topic: string, error: Error) =>
  new MqttPublishError({ topic, reason: live.isClosing() ? "closed" : "rejected", message: error.message, reasonCode: reasonCodeOf(error) })

/** Hands the batch to the client in one go; one outcome per message, `undefined` once its PUBACK came. */
const sendFitting = (sender: PublishSender, batch: ReadonlyArray<Prepared>): Effect.Effect<Outcomes> =>
  Effect.callback<Outcomes>((resume) => {
    const { live } = sender
    if (sender.released || live.isClosing()) {
      return resume(Effect.succeed(batch.map(({ topic }) => new MqttPublishError({ topic, reason: "closed", message: "connection is closing" }))))
    }
    const wait = startWait(sender, batch, resume)
    gatherTurnWrites(live.client)
    batch.forEach(({ topic, payload, options }, i) =>
      live.client.publish(topic, payload, options, (error) => settle(sender, wait, i, error ? publishErrorOf(live, topic, error) : undefined))
    )
    return Effect.sync(() => endWait(sender, wait))
  })

/** Each message over the broker's Maximum Packet Size, else `undefined`; `undefined` when none is. */
const tooLargeOf = (limit: number | undefined, batch: ReadonlyArray<Prepared>): Array<MessageTooLarge | undefined> | undefined => {
  if (limit === undefined) return undefined
  let any = false
  const refused = batch.map(({ topic, payload, options }) => {
    const bytes = publishPacketBytes(topic, payload, options)
    if (bytes <= limit) return undefined
    any = true
    return messageTooLarge(topic, bytes, limit)
  })
  return any ? refused : undefined
}

/**
 * Like {@link sendFitting}, but a message over the broker's Maximum Packet Size is not handed to
 * the client: the broker would drop the connection for it (0x95), and mqtt.js would resend it
 * after every reconnect. It fails with `MessageTooLarge`; the others are sent.
 */
export const sendAll = (sender: PublishSender, batch: ReadonlyArray<Prepared>): Effect.Effect<SendOutcomes> =>
  Effect.suspend((): Effect.Effect<SendOutcomes> => {
    const refused = tooLargeOf(sender.live.brokerMaxPacketBytes(), batch)
    if (refused === undefined) return sendFitting(sender, batch)
    const places = refused.flatMap((error, i) => (error === undefined ? [i] : []))
    if (places.length === 0) return Effect.succeed(refused)
    return Effect.map(sendFitting(sender, places.map((i) => batch[i]!)), (outcomes) => {
      const merged: Array<MqttPublishError | MessageTooLarge | undefined> = refused
      outcomes.forEach((outcome, k) => (merged[places[k]!] = outcome))
      return merged
    })
  })

const failedFirst = ([error]: SendOutcomes): Effect.Effect<void, MqttPublishError | MessageTooLarge> => (error === undefined ? Effect.void : Effect.fail(error))

export const send = (sender: PublishSender, prepared: Prepared): Effect.Effect<void, MqttPublishError | MessageTooLarge> =>
  Effect.flatMap(sendAll(sender, [prepared]), failedFirst)
