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

/**
 * How long a socket that has only PUBACKs to write waits for company. A request is acknowledged
 * after its reply's own PUBACK came back, so its PUBACK is a write of its own unless it waits
 * for the next reply (a few ms under load). Later is safe: an unacknowledged request is only
 * redelivered, and answered from its done mark.
 */
export const ACK_LINGER_MS = 5

// The streams corked in this turn (one per client that wrote), uncorked together by one setImmediate.
const corked = new Set<Corkable>()
// The streams corked for PUBACKs alone: uncorked by a timer, or with the turn once a publish joins.
const lingering = new Set<Corkable>()

const uncorkAll = () => {
  for (const stream of corked) stream.uncork()
  corked.clear()
}

const uncorkLingering = () => {
  for (const stream of lingering) stream.uncork()
  lingering.clear()
}

/**
 * Holds the client's packets of this turn of the event loop (publishes, their PUBACKs) in one
 * socket write: the socket is corked now and uncorked by `setImmediate`, after the turn's I/O
 * callbacks ran. mqtt.js corks each packet only until `process.nextTick`, so every message that
 * arrived (and the reply and PUBACK it led to) cost a write call of its own. Order is kept; a
 * stream that cannot cork (a WebSocket) is left alone. PUBACKs held by `gatherAckWrites` go with it.
 */
export const gatherTurnWrites = (client: MqttClient): void => {
  const stream = corkableOf(client.stream)
  if (stream === undefined || corked.has(stream)) return
  if (corked.size === 0) setImmediate(uncorkAll)
  // Already corked once for its PUBACKs: the turn's uncork now releases them with the publish.
  if (!lingering.delete(stream)) stream.cork()
  corked.add(stream)
}

/**
 * As {@link gatherTurnWrites}, for a PUBACK: a socket that writes nothing else this turn keeps it
 * for up to {@link ACK_LINGER_MS}, so the acknowledgements of a light load ride along with the
 * next publish instead of costing a write call each.
 */
export const gatherAckWrites = (client: MqttClient): void => {
  const stream = corkableOf(client.stream)
  if (stream === undefined || corked.has(stream) || lingering.has(stream)) return
  if (lingering.size === 0) setTimeout(uncorkLingering, ACK_LINGER_MS)
  stream.cork()
  lingering.add(stream)
}
