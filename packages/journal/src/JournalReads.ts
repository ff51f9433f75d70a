import { Effect } from "effect"
import { type ConnectionError, InvalidInput, type WrongType } from "@microdcs/store"
import { JournalCache } from "./JournalCache.js"
import type { JournalConfig } from "./JournalConfig.js"
import type { JournalDeps } from "./JournalDeps.js"
import type { CorruptEntry, JournalNotFound, JournalUnreadable } from "./JournalErrors.js"
import type { RecalledRow } from "./JournalScripts.js"
import type { JournalEntry } from "./JournalStore.js"

/** Reading entries through the local cache: recall by search-key value, and warming from the LRU journals. */

export type JournalReadError = InvalidInput | WrongType | CorruptEntry | ConnectionError

export interface RecallOptions {
  /** At most this many entries, newest first. Default 20. */
  readonly limit?: number | undefined
  /** Only entries with a reference time at or after this (epoch ms). */
  readonly since?: number | undefined
  /** Stamp the value as recently used in `journal:lru` (what warming reads). Default true; a read-only caller passes false. */
  readonly stamp?: boolean | undefined
}

export interface WarmSummary {
  readonly indexKeys: number
  readonly entries: number
  readonly bytes: number
  /** Warming stopped because the next entry did not fit. */
  readonly full: boolean
}

const searchKeyOf = (config: JournalConfig, searchKey: string): Effect.Effect<void, InvalidInput> =>
  config.searchKeys.some((s) => s.name === searchKey)
    ? Effect.void
    : Effect.fail(
        new InvalidInput({
          field: "searchKey",
          message: `journal '${config.name}' has no search key '${searchKey}' (it has ${config.searchKeys.map((s) => s.name).join(", ") || "none"})`
        })
      )

interface RecallTarget {
  readonly scope: string
  readonly journal: string
  readonly searchKey: string
  readonly value: string
}

/** The rows of a recall, with the payloads the cache lacks by id. */
const recallRowsOf = (deps: JournalDeps, target: RecallTarget, recallOptions: RecallOptions) =>
  Effect.gen(function* () {
    const { store, cache } = deps
    const { scope, journal, searchKey, value } = target
    const read = { limit: recallOptions.limit ?? 20, since: recallOptions.since, now: deps.clock.now() }
    // The script reads and stamps in one step and brings the payloads: for a stamping recall without a cache.
    const byIds = cache.enabled || recallOptions.stamp === false
    const rows = byIds
      ? yield* store.recallIds(scope, journal, searchKey, value, { ...read, stamp: recallOptions.stamp })
      : yield* store.recallRows(scope, journal, searchKey, value, { ...read, withPayloads: true })
    const missing = rows.filter((r) => r.payload === null && !cache.has(JournalCache.keyOf(scope, journal, r.id)))
    const fetched = byIds ? yield* store.payloads(scope, journal, missing.map((r) => r.id)) : []
    const fresh = new Map(missing.map((r, i) => [r.id, fetched[i] ?? null]))
    return { rows, fresh }
  })

/** The rows' entries, from the cache or decoded (and then cached); a row swept meanwhile is left out. */
const entriesOf = (deps: JournalDeps, scope: string, journal: string, rows: ReadonlyArray<RecalledRow>, fresh: ReadonlyMap<string, Buffer | null>) =>
  Effect.gen(function* () {
    const { store, cache } = deps
    const entries: Array<JournalEntry> = []
    for (const row of rows) {
      const cacheKey = JournalCache.keyOf(scope, journal, row.id)
      const cached = cache.get(cacheKey)
      if (cached !== undefined) {
        entries.push({ id: row.id, time: row.time, event: cached.event })
        continue
      }
      const bytes = row.payload ?? fresh.get(row.id) ?? null
      if (bytes === null) continue // swept since the index was read
      const event = yield* store.decode(scope, journal, row.id, bytes)
      cache.set(cacheKey, { event, encodedBytes: bytes.length })
      entries.push({ id: row.id, time: row.time, event })
    }
    return entries
  })

/** The newest entries of one search-key value, decoded; stamps the value's index key in the journal's LRU. */
export const recall = (
  deps: JournalDeps,
  target: RecallTarget,
  recallOptions: RecallOptions = {}
): Effect.Effect<ReadonlyArray<JournalEntry>, JournalNotFound | JournalUnreadable | JournalReadError> =>
  Effect.gen(function* () {
    const config = (yield* deps.configs.journal(target.scope, target.journal)).config
    yield* searchKeyOf(config, target.searchKey)
    const { rows, fresh } = yield* recallRowsOf(deps, target, recallOptions)
    return yield* entriesOf(deps, target.scope, target.journal, rows, fresh)
  })

/** Caches the newest entries of one index key; `false` once the next entry does not fit. */
const warmIndexKey = (deps: JournalDeps, parts: { readonly scope: string; readonly journal: string }, indexKey: string, summary: { entries: number }) =>
  Effect.gen(function* () {
    const { store, cache } = deps
    // A corrupted index key (another type) warms nothing, and does not stop the warming.
    const all = yield* store.indexIds(indexKey, deps.options.warmEntriesPerKey).pipe(Effect.catchTag("WrongType", () => Effect.succeed(null)))
    if (all === null) return true
    if (all.length === 0) yield* store.forgetIfEmpty(indexKey) // stamped by a recall that found nothing
    const ids = all.filter((id) => !cache.has(JournalCache.keyOf(parts.scope, parts.journal, id)))
    const payloads = yield* store.payloads(parts.scope, parts.journal, ids)
    for (const [i, bytes] of payloads.entries()) {
      if (bytes === null) continue
      if (!cache.fits(bytes.length)) return false
      const event = yield* store.decode(parts.scope, parts.journal, ids[i]!, bytes)
      cache.set(JournalCache.keyOf(parts.scope, parts.journal, ids[i]!), { event, encodedBytes: bytes.length })
      summary.entries++
    }
    return true
  })

/**
 * Fills the local cache from the most recently recalled index keys of every held journal
 * (their `journal:lru`), most recent first, and stops at the first entry that does not fit:
 * no scan of the payloads, so many processes starting at once do not stampede Valkey.
 */
export const warm = (deps: JournalDeps): Effect.Effect<WarmSummary, JournalReadError> =>
  Effect.gen(function* () {
    const { store, cache } = deps
    if (!cache.enabled) return { indexKeys: 0, entries: 0, bytes: 0, full: false }
    const journals = deps.configs.all().map((j) => j.config)
    const used = (yield* Effect.forEach(journals, (c) => store.recentlyUsed(c.scope, c.name, deps.options.warmIndexKeys))).flat().sort((a, b) => b.at - a.at)
    let indexKeys = 0
    const summary = { entries: 0 }
    for (const { indexKey } of used) {
      const parts = store.parseIndexKey(indexKey)
      if (parts === undefined) continue
      indexKeys++
      const fitted = yield* warmIndexKey(deps, parts, indexKey, summary)
      if (!fitted) return { indexKeys, entries: summary.entries, bytes: cache.bytes, full: true }
    }
    return { indexKeys, entries: summary.entries, bytes: cache.bytes, full: false }
  })
