import { Effect } from "effect"
import { Redis } from "iovalkey"

/**
 * A plain iovalkey client with its default options (no auto-pipelining): the "raw iovalkey"
 * every throughput figure is compared with. The store's own connection auto-pipelines, so
 * measuring raw calls on it would flatter the store.
 */
export const rawClient = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Redis(url, { lazyConnect: true })
      await client.connect()
      return client
    }),
    (client) => Effect.promise(() => client.quit().catch(() => undefined))
  )
