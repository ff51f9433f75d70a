import { Effect } from "effect"
import { type ConnectionError, InvalidInput, KeyReads, typedCommand, typedPipeline, type WrongType, wrongTypeError } from "@microdcs/store"
import { journalRecall, type RecalledRow } from "./JournalScripts.js"
import { checked, journalKey, journalParts, type JournalStoreDeps } from "./JournalStoreDeps.js"

/** Reading entries back: by search-key value (stamping the LRU), by id, and what warming reads. */

/** One recalled entry: its id (the event's dedupe hash), reference time and the event. */
export interface JournalEntry {
  readonly id: string
  readonly time: number
  readonly event: unknown
}

interface RecallBounds {
  readonly limit: number
  readonly since?: number | undefined
  readonly now: number
}

const boundsProblem = (options: RecallBounds): InvalidInput | undefined => {
  if (!Number.isSafeInteger(options.limit) || options.limit < 1 || options.limit > 10_000) {
    return new InvalidInput({ field: "limit", message: `limit must be an integer from 1 to 10000, got ${options.limit}` })
  }
  if (options.since !== undefined && !Number.isFinite(options.since)) {
    return new InvalidInput({ field: "since", message: "since must be a time (epoch ms)" })
  }
  return undefined
}

/** The index key of one value, every part checked; the recall's bounds checked first. */
const indexKeyOf = (deps: JournalStoreDeps, scope: string, journal: string, searchKey: string, value: string, bounds: RecallBounds) =>
  Effect.gen(function* () {
    const problem = boundsProblem(bounds)
    if (problem !== undefined) return yield* problem
    yield* journalParts(scope, journal)
    yield* checked("searchKey", searchKey)
    yield* checked("value", value)
    return journalKey(deps, "journalIndex", { scope, journal, searchKey, value })
  })

/** The newest entry ids (and, with payloads, their bytes) of one value, newest first; stamps the LRU. */
export const recallRows = (
  deps: JournalStoreDeps,
  scope: string,
  journal: string,
  searchKey: string,
  value: string,
  options: RecallBounds & { readonly withPayloads: boolean }
): Effect.Effect<ReadonlyArray<RecalledRow>, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const index = yield* indexKeyOf(deps, scope, journal, searchKey, value, options)
    const reply = yield* deps.valkey.scriptWithBytes(
      journalRecall,
      { index, payload: journalKey(deps, "journalPayload", { scope, journal }), lru: journalKey(deps, "journalLru", { scope, journal }) },
      { since: options.since, limit: options.limit, now: options.now, withPayloads: options.withPayloads }
    )
    return reply.status === "ok" ? reply.rows : yield* wrongTypeError(reply)
  })

/**
 * The newest entry ids and times of one value, and the LRU stamp, as one pipelined round trip
 * (cheaper than a script; the stamp need not be atomic with the read). For a caller whose
 * cache holds the entries; a value without entries is stamped too (warming drops it). With
 * `stamp: false` only the read (a read-only caller, such as the daemon's HTTP API).
 */
export const recallIds = (
  deps: JournalStoreDeps,
  scope: string,
  journal: string,
  searchKey: string,
  value: string,
  options: RecallBounds & { readonly stamp?: boolean | undefined }
): Effect.Effect<ReadonlyArray<RecalledRow>, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const index = yield* indexKeyOf(deps, scope, journal, searchKey, value, options)
    const lru = journalKey(deps, "journalLru", { scope, journal })
    const keys = options.stamp === false ? [index] : [index, lru]
    const [found] = yield* typedPipeline<ReadonlyArray<string>>(deps.valkey, "journal recall", keys, "zset", (p, key) =>
      key === index ? p.zrevrangebyscore(index, "+inf", options.since ?? "-inf", "WITHSCORES", "LIMIT", 0, options.limit) : p.zadd(lru, options.now, index)
    )
    const rows: Array<RecalledRow> = []
    for (let i = 0; found !== undefined && i + 1 < found.length; i += 2) rows.push({ id: found[i]!, time: Number(found[i + 1]), payload: null })
    return rows
  })

/** Which journal an index key belongs to, when it is one of ours. */
export const parseIndexKey = (deps: JournalStoreDeps, key: string) => {
  const parsed = deps.keys.parse(key)
  return parsed?.family === "journalIndex" ? (parsed.parts as { readonly scope: string; readonly journal: string; readonly searchKey: string; readonly value: string }) : undefined
}

/** Drops an index key from its journal's LRU when it holds no entry (warming found it empty). */
export const forgetIfEmpty = (deps: JournalStoreDeps, indexKey: string): Effect.Effect<void, WrongType | ConnectionError> => {
  const parts = parseIndexKey(deps, indexKey)
  if (parts === undefined) return Effect.void
  const lru = journalKey(deps, "journalLru", { scope: parts.scope, journal: parts.journal })
  return typedCommand(deps.valkey, "journal lru forget", lru, "zset", (c) =>
    c.exists(indexKey).then((n) => (n === 0 ? c.zrem(lru, indexKey) : 0))
  ).pipe(Effect.asVoid)
}

/** Encoded entries by id (one HMGET); a missing one is `null` (swept meanwhile). */
export const payloads = (
  deps: JournalStoreDeps,
  scope: string,
  journal: string,
  ids: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<Buffer | null>, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    if (ids.length === 0) return []
    yield* journalParts(scope, journal)
    const key = journalKey(deps, "journalPayload", { scope, journal })
    return yield* KeyReads.hashValues(deps.valkey, key, ids, "bytes")
  })

/** The most recently recalled index keys of a journal, newest first (what warming reads). */
export const recentlyUsed = (
  deps: JournalStoreDeps,
  scope: string,
  journal: string,
  limit: number
): Effect.Effect<ReadonlyArray<{ readonly indexKey: string; readonly at: number }>, WrongType | ConnectionError> => {
  const lru = journalKey(deps, "journalLru", { scope, journal })
  return typedCommand(deps.valkey, "journal lru", lru, "zset", (c) => c.zrevrange(lru, 0, limit - 1, "WITHSCORES")).pipe(
    Effect.map((flat) => {
      const rows: Array<{ indexKey: string; at: number }> = []
      for (let i = 0; i + 1 < flat.length; i += 2) rows.push({ indexKey: flat[i]!, at: Number(flat[i + 1]) })
      return rows
    })
  )
}

/** The newest entry ids of an index key read from the LRU (warming), without stamping it again. */
export const indexIds = (deps: JournalStoreDeps, indexKey: string, limit: number): Effect.Effect<ReadonlyArray<string>, WrongType | ConnectionError> =>
  typedCommand(deps.valkey, "journal index", indexKey, "zset", (c) => c.zrevrange(indexKey, 0, limit - 1))
