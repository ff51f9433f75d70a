import type { Redis } from "iovalkey"
import { Effect } from "effect"
import { InvalidInput, UnknownOutcome } from "./Errors.js"
import { defaults, type ValkeyOptions } from "./ValkeyOptions.js"

/** A reply, how many replicas confirmed it (or why asking failed), and the doubts raised before it was sent. */
export interface Confirmed<A> {
  readonly value: A
  readonly ack: { readonly replicas: number } | { readonly failed: string }
  readonly doubtsBefore: number
}

/**
 * Durability of acknowledged writes (`minReplicasAck`): `WAIT numreplicas timeout` on the
 * connection that sent a write confirms that the replicas have it, so a failover cannot lose a
 * write the caller was told succeeded. An unconfirmed reply is an `UnknownOutcome`.
 *
 * WAIT covers every write the connection sent before it, so the calls issued in one tick share
 * one WAIT, sent on the next tick after all of them: one replica round trip per batch, not per
 * write (the server blocks the connection during a WAIT, so one per write would queue up).
 *
 * After any `UnknownOutcome` on the connection a write may be on the primary alone, and an
 * outcome check that reads it there must not call it landed: until a later WAIT confirms the
 * connection again, every reply on it is confirmed (`inDoubt`).
 */
export const makeReplicaAck = (replicas: number, timeoutMs: number) => {
  let pending: Promise<Confirmed<never>["ack"]> | undefined
  let doubts = 0
  let cleared = 0

  const waitForReplicas = (client: Redis): Promise<Confirmed<never>["ack"]> => {
    if (pending) return pending
    const batch = new Promise<Confirmed<never>["ack"]>((resolve) =>
      process.nextTick(() => {
        pending = undefined
        client.wait(replicas, timeoutMs).then(
          (confirmed) => resolve({ replicas: confirmed }),
          (error: unknown) => resolve({ failed: error instanceof Error ? error.message : String(error) })
        )
      })
    )
    pending = batch
    return batch
  }

  /** Issues `call`, then joins the WAIT that follows it on the same connection (commands go out in order). */
  const send = async <A>(client: Redis, call: (client: Redis) => Promise<A>): Promise<Confirmed<A>> => {
    const doubtsBefore = doubts
    const reply = call(client)
    const ack = waitForReplicas(client)
    return { value: await reply, ack: await ack, doubtsBefore }
  }

  const doubt = () => {
    doubts++
  }

  const settle = <A>(operation: string, confirmed: Confirmed<A>): Effect.Effect<A, UnknownOutcome> => {
    const { ack } = confirmed
    if ("replicas" in ack && ack.replicas >= replicas) {
      // This WAIT went out after every doubt raised before the call: those writes are confirmed.
      cleared = Math.max(cleared, confirmed.doubtsBefore)
      return Effect.succeed(confirmed.value)
    }
    doubt()
    const why = "replicas" in ack ? `only ${ack.replicas} of ${replicas} replicas confirmed it within ${timeoutMs} ms` : `asking the replicas failed (${ack.failed})`
    return Effect.fail(new UnknownOutcome({ operation, message: `executed on the primary, but ${why}: a failover may lose it` }))
  }

  return { replicas, timeoutMs, send, settle, doubt, inDoubt: () => doubts > cleared }
}

export type ReplicaAck = ReturnType<typeof makeReplicaAck>

/**
 * Why the durability settings cannot be used, or `undefined`. The WAIT timeout must stay below
 * the command timeout: else the client gives up on the WAIT first, and says less about why.
 */
export const replicaAckProblem = (options: ValkeyOptions): InvalidInput | undefined => {
  // Unset through Sentinel may become 1 once Sentinel was asked: checked as 1 here, before connecting.
  const replicas = options.minReplicasAck ?? (options.sentinels !== undefined && options.sentinels.length > 0 ? 1 : defaults.minReplicasAck)
  if (!Number.isSafeInteger(replicas) || replicas < 0) {
    return new InvalidInput({ field: "minReplicasAck", message: `minReplicasAck must be 0 (off) or a positive integer, got ${replicas}` })
  }
  const timeoutMs = options.replicaAckTimeoutMs ?? defaults.replicaAckTimeoutMs
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
    return new InvalidInput({ field: "replicaAckTimeoutMs", message: `replicaAckTimeoutMs must be a positive integer, got ${timeoutMs}` })
  }
  const commandTimeoutMs = options.commandTimeoutMs ?? defaults.commandTimeoutMs
  if (replicas > 0 && timeoutMs >= commandTimeoutMs) {
    return new InvalidInput({
      field: "replicaAckTimeoutMs",
      message: `replicaAckTimeoutMs (${timeoutMs}) must be below commandTimeoutMs (${commandTimeoutMs})`
    })
  }
  return undefined
}
