import { Effect } from "effect"
import type { AckHandler, IPublishPacket, MqttClient } from "mqtt"
import { gatherAckWrites } from "./TurnWrites.js"

/**
 * Acknowledging QoS 1 messages only when the consumer says so: mqtt.js is told to send no PUBACK
 * on arrival, and the message's `ack` sends it later.
 */

/** Receives every message; for QoS 1 the PUBACK is sent only when `ack` runs. */
export type MessageSink = (topic: string, payload: Buffer, packet: IPublishPacket, ack: Effect.Effect<void>) => void

/**
 * Passed to mqtt.js's ack callback to mean "no PUBACK now". mqtt.js's own delay mechanism (calling
 * the callback late) stalls its packet pump: no PUBACK for our own publishes, no PINGRESP, no
 * further message would be read until the ack, so a handler that publishes a reply before acking
 * would deadlock. Failing the callback instead lets the pump go on without a PUBACK and without the
 * `message` event; mqtt.js reports this marker as an `error` event, which our listener ignores.
 */
class DeferredAck extends Error {
  constructor() {
    super("PUBACK deferred until the consumer acknowledges")
  }
}
export const deferred = new DeferredAck()

type SendPacket = (this: MqttClient, packet: { cmd: "puback"; messageId: number; reasonCode: number }) => void

/**
 * mqtt.js has no public call to send a PUBACK later, so we use its internal `_sendPacket` (the
 * function its own ack path calls). Checked at start, so an mqtt.js upgrade that removes it fails
 * loudly instead of leaving every message unacknowledged.
 */
export const sendPacketOf = (client: MqttClient): SendPacket => {
  const candidate: unknown = (client as unknown as Record<string, unknown>)["_sendPacket"]
  if (typeof candidate !== "function") throw new Error("mqtt.js no longer has _sendPacket; manual PUBACK needs an update of ManualAck.ts")
  return candidate as SendPacket
}

/**
 * What acknowledging needs of the client's state. `generation` counts CONNACKs: an ack for a
 * message of an earlier connection is stale. `unacknowledged` counts this connection's QoS 1
 * messages not acked yet; a new one starts at 0. `client` and `sendPacket` are set once the
 * client is created.
 */
export interface AckState {
  generation: number
  received: number
  unacknowledged: number
  client: MqttClient | undefined
  sendPacket: SendPacket | undefined
}

interface AckDeps {
  readonly clientId: string
  readonly sink: MessageSink
  readonly state: AckState
}

const makeAck = (deps: AckDeps, messageId: number | undefined, generation: number): Effect.Effect<void> => {
  const { state } = deps
  let acked = false
  return Effect.suspend(() => {
    const { client, sendPacket } = state
    if (acked || messageId === undefined || client === undefined || sendPacket === undefined) return Effect.void
    acked = true
    if (generation !== state.generation || !client.connected) {
      return Effect.logDebug("ack of a message from a lost connection dropped; the broker redelivers it").pipe(
        Effect.annotateLogs({ clientId: deps.clientId, messageId })
      )
    }
    gatherAckWrites(client)
    sendPacket.call(client, { cmd: "puback", messageId, reasonCode: 0 })
    state.unacknowledged--
    return Effect.void
  })
}

/** mqtt.js's ack handler: a QoS 1 message goes to the sink with an `ack` of its own, no PUBACK yet. */
export const ackHandlerOf = (deps: AckDeps): AckHandler => (topic, payload, packet: IPublishPacket, done) => {
  const { state } = deps
  // QoS 2 (only if a caller subscribed with it) keeps mqtt.js's own flow and arrives as `message`.
  if (packet.qos !== 1) return done(0)
  state.received++
  state.unacknowledged++
  deps.sink(topic, payload, packet, makeAck(deps, packet.messageId, state.generation))
  done(deferred)
}
