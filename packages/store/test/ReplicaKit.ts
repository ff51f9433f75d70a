import { Effect } from "effect"
import { infoFields, respCommand, startValkeyServer, type ValkeyServer } from "@microdcs/test-utils"

/** Runs `body` against a primary with one replica in sync; both servers are stopped after. */
export const withReplica = <A, E, R>(body: (primary: ValkeyServer) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const primary = await startValkeyServer()
      const replica = await startValkeyServer({ extraArgs: ["--replicaof", primary.host, String(primary.port)] })
      const deadline = Date.now() + 30_000
      while (infoFields(await respCommand(replica.host, replica.port, ["INFO", "replication"]))["master_link_status"] !== "up") {
        if (Date.now() > deadline) throw new Error("the replica did not sync")
        await new Promise((r) => setTimeout(r, 50))
      }
      return { primary, replica }
    }),
    ({ primary }) => body(primary),
    ({ primary, replica }) => Effect.promise(() => Promise.all([replica.stop(), primary.stop()]))
  )

/** How many WAIT calls the server has run so far. */
export const waitCalls = async (server: ValkeyServer): Promise<number> => {
  const stats = infoFields(await respCommand(server.host, server.port, ["INFO", "commandstats"]))
  return Number(/calls=(\d+)/.exec(stats["cmdstat_wait"] ?? "")?.[1] ?? 0)
}
