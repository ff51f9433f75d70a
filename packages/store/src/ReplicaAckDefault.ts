import { Effect } from "effect"
import { createClient, sentinelConnectionOptions } from "./Connection.js"
import { StoreUnavailable } from "./Errors.js"
import { defaults, type SentinelNode, type ValkeyOptions } from "./ValkeyOptions.js"

/** `num-slaves` of a `SENTINEL MASTER` reply (a flat list of field names and values). */
const numReplicas = (reply: unknown): number | undefined => {
  if (!Array.isArray(reply)) return undefined
  const at = reply.findIndex((field, i) => i % 2 === 0 && field === "num-slaves")
  const count = at < 0 ? Number.NaN : Number(reply[at + 1])
  return Number.isSafeInteger(count) && count >= 0 ? count : undefined
}

const askSentinel = async (options: ValkeyOptions, node: SentinelNode, name: string): Promise<number> => {
  const client = createClient(sentinelConnectionOptions(options, node))
  // The failure surfaces as the rejected connect or call; the event alone must not crash the process.
  client.on("error", () => {})
  try {
    await client.connect()
    const count = numReplicas(await client.call("SENTINEL", "MASTER", name))
    if (count === undefined) throw new Error(`no replica count for ${name}`)
    return count
  } finally {
    client.disconnect()
  }
}

/**
 * How many replicas of the primary Sentinel knows (`SENTINEL MASTER {name}`, `num-slaves`):
 * every replica it has seen, one that is down now too, since it may come back and be promoted.
 * The sentinels are asked in turn; none answering is `StoreUnavailable`.
 */
export const sentinelReplicaCount = (options: ValkeyOptions, sentinels: ReadonlyArray<SentinelNode>): Effect.Effect<number, StoreUnavailable> =>
  Effect.tryPromise({
    try: async () => {
      const name = options.sentinelName ?? defaults.sentinelName
      const problems: Array<string> = []
      for (const node of sentinels) {
        try {
          return await askSentinel(options, node, name)
        } catch (error) {
          problems.push(`${node.host}:${node.port}: ${error instanceof Error ? error.message : String(error)}`)
        }
      }
      throw new Error(problems.join("; "))
    },
    catch: (error) => new StoreUnavailable({ operation: "ask Sentinel for the primary's replicas", message: error instanceof Error ? error.message : String(error) })
  })

/**
 * The replicas that must confirm each write (`WAIT`): the explicit `minReplicasAck`, else, through
 * Sentinel, 1 when Sentinel knows a replica (a failover would promote one, losing whatever it
 * lacks), and 0 for a primary alone (nothing to fail over to; the decision is logged, since a
 * replica added later is only counted at the next start). Without Sentinel, 0.
 */
export const effectiveMinReplicasAck = (options: ValkeyOptions): Effect.Effect<number, StoreUnavailable> => {
  if (options.minReplicasAck !== undefined) return Effect.succeed(options.minReplicasAck)
  const sentinels = options.sentinels ?? []
  if (sentinels.length === 0) return Effect.succeed(defaults.minReplicasAck)
  const name = options.sentinelName ?? defaults.sentinelName
  return Effect.flatMap(sentinelReplicaCount(options, sentinels), (replicas) =>
    replicas === 0
      ? Effect.as(
          Effect.logWarning("Sentinel knows no replica of the primary: writes are not confirmed by one; after adding a replica, restart or set minReplicasAck (VALKEY_MIN_REPLICAS_ACK)").pipe(
            Effect.annotateLogs({ sentinelName: name })
          ),
          0
        )
      : Effect.as(
          Effect.logInfo("through Sentinel every write waits for one replica's confirmation (WAIT), so a failover cannot lose it; minReplicasAck 0 turns it off").pipe(
            Effect.annotateLogs({ sentinelName: name, replicas })
          ),
          1
        )
  )
}
