import { Effect } from "effect"
import { KeyReads, Valkey } from "@microdcs/store"

/**
 * Every key under the connection's prefix with its type and full content (TTLs only as present or
 * not, since they tick): equal snapshots mean nothing was written.
 */
export const snapshot = Effect.gen(function* () {
  const valkey = yield* Valkey
  const keys = yield* KeyReads.islandKeys(valkey)
  const contents = yield* KeyReads.contents(valkey, keys)
  return Object.fromEntries(contents.map(({ key, type, expiresInMs, value }) => [key, JSON.stringify({ type, ttl: expiresInMs !== null, content: value })]))
})
