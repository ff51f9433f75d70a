import type { MqttClient } from "mqtt"

/** The part of a socket (or any writable) that corking needs. */
interface Corkable {
  cork(): void
  uncork(): void
}

const corkableOf = (stream: unknown): Corkable | undefined => {
  const candidate = stream as Partial<Corkable> | undefined
  return typeof candidate?.cork === "function" && typeof candidate.uncork === "function" ? (candidate as Corkable) : undefined
}

// The streams corked in this turn (one per client that wrote), uncorked together by one setImmediate.
const corked = new Set<Corkable>()

const uncorkAll = () => {
  for (const stream of corked) stream.uncork()
  corked.clear()
}

/**
 * Holds the client's packets of this turn of the event loop (publishes, their PUBACKs) in one
 * socket write: the socket is corked now and uncorked by `setImmediate`, after the turn's I/O
 * callbacks ran. mqtt.js corks each packet only until `process.nextTick`, so every message that
 * arrived (and the reply and PUBACK it led to) cost a write call of its own. Order is kept; a
 * stream that cannot cork (a WebSocket) is left alone.
 */
export const gatherTurnWrites = (client: MqttClient): void => {
  const stream = corkableOf(client.stream)
  if (stream === undefined || corked.has(stream)) return
  if (corked.size === 0) setImmediate(uncorkAll)
  stream.cork()
  corked.add(stream)
}
