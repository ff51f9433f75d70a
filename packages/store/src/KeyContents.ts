import { Effect } from "effect"
import type { ConnectionError } from "./Errors.js"
import { pipelined, type PipelinedRead, wrongTypeCell } from "./IndexReads.js"
import type { ValkeyService } from "./Valkey.js"

/**
 * One key as it is now: its type, its time to live and its whole value in a plain, comparable
 * form. The value by type: `string` its text; `hash` its `[field, value]` pairs sorted by field;
 * `set` its members sorted; `zset` its `[member, score]` pairs by score; `list` its items;
 * `stream` its `[id, fields]` entries; `null` for a missing key, for a type not listed here, and
 * for a key whose type changed between the two reads.
 */
export interface KeyContent {
  readonly key: string
  readonly type: string
  /** Milliseconds to live; `null` without a TTL (or missing). */
  readonly expiresInMs: number | null
  readonly value: string | ReadonlyArray<unknown> | null
}

const readOf: Record<string, (key: string) => PipelinedRead> = {
  string: (key) => (p) => p.get(key),
  hash: (key) => (p) => p.hgetall(key),
  set: (key) => (p) => p.smembers(key),
  zset: (key) => (p) => p.zrange(key, 0, -1, "WITHSCORES"),
  list: (key) => (p) => p.lrange(key, 0, -1),
  stream: (key) => (p) => p.xrange(key, "-", "+")
}

const pairs = (flat: ReadonlyArray<string>): ReadonlyArray<readonly [string, string]> => {
  const out: Array<readonly [string, string]> = []
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!])
  return out
}

const plainValue = (type: string, cell: unknown): KeyContent["value"] => {
  if (cell === wrongTypeCell || cell === null || cell === undefined) return null
  if (type === "hash") return Object.entries(cell as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  if (type === "set") return [...(cell as ReadonlyArray<string>)].sort()
  if (type === "zset") return pairs(cell as ReadonlyArray<string>)
  return cell as string | ReadonlyArray<unknown>
}

/** The content of each key (TYPE and PTTL in one round trip, then the values in a second one), in key order. */
export const contents = (valkey: ValkeyService, keys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<KeyContent>, ConnectionError> =>
  Effect.gen(function* () {
    const heads = yield* pipelined(valkey, "key types and ttls", keys.flatMap((key) => [(p) => p.type(key), (p) => p.pttl(key)] satisfies Array<PipelinedRead>))
    const typed = keys.map((key, i) => ({ key, type: String(heads[2 * i]), ttl: Number(heads[2 * i + 1]) }))
    const readable = typed.filter((k) => readOf[k.type] !== undefined)
    const cells = yield* pipelined(valkey, "key values", readable.map((k) => readOf[k.type]!(k.key)))
    const valueOf = new Map(readable.map((k, i) => [k.key, plainValue(k.type, cells[i])]))
    return typed.map(({ key, type, ttl }) => ({ key, type, expiresInMs: ttl >= 0 ? ttl : null, value: valueOf.get(key) ?? null }))
  })
