import { Effect } from "effect"
import { Valkey } from "@microdcs/store"
import { scanKeys } from "@microdcs/test-utils"

/**
 * Every key under the connection's prefix with its type and full content (TTLs only as present or
 * not, since they tick): equal snapshots mean nothing was written.
 */
export const snapshot = Effect.gen(function* () {
  const valkey = yield* Valkey
  const prefix = valkey.options.prefix!
  return yield* valkey.command("snapshot", async (c) => {
    const entries: Array<[string, string]> = []
    for (const key of await scanKeys(c, `${prefix}:*`)) {
      const type = await c.type(key)
      const ttl = (await c.pttl(key)) > 0
      let content: unknown
      if (type === "string") content = await c.get(key)
      else if (type === "hash") content = Object.entries(await c.hgetall(key)).sort()
      else if (type === "set") content = (await c.smembers(key)).sort()
      else if (type === "zset") content = await c.zrange(key, 0, -1, "WITHSCORES")
      else if (type === "stream") content = await c.xrange(key, "-", "+")
      else if (type === "list") content = await c.lrange(key, 0, -1)
      entries.push([key, JSON.stringify({ type, ttl, content })])
    }
    return Object.fromEntries(entries)
  })
})
