import { Effect, Runtime, type Scope } from "effect"
import { type ConnectionError, InvalidInput, Nudges, type StoreUnavailable, type WrongType } from "@microdcs/store"
import { JournalCache } from "./JournalCache.js"
import { JournalClock } from "./JournalClock.js"
import type { CounterConfig, JournalConfig } from "./JournalConfig.js"
import { JournalConfigStore, type UnreadableConfig } from "./JournalConfigStore.js"
import { type CorruptEntry, type JournalConfigInvalid, JournalNotFound, type JournalNotLoaded, type JournalUnreadable } from "./JournalErrors.js"
import { JournalOptions } from "./JournalOptions.js"
import { makeHeldConfigurations } from "./HeldConfigurations.js"
import { type InsertOutcome, type JournalEntry, type JournalEvent, type JournalFigures, JournalStore } from "./JournalStore.js"

export type JournalReadError = InvalidInput | WrongType | CorruptEntry | ConnectionError

export interface RecallOptions {
  /** At most this many entries, newest first. Default 20. */
  readonly limit?: number | undefined
  /** Only entries with a reference time at or after this (epoch ms). */
  readonly since?: number | undefined
  /** Stamp the value as recently used in `journal:lru` (what warming reads). Default true; a read-only caller passes false. */
  readonly stamp?: boolean | undefined
}

export interface Recorded extends InsertOutcome {
  readonly scope: string
  readonly journal: string
}

export interface SweepSummary {
  readonly entriesRemoved: number
  readonly bytesRemoved: number
  readonly bucketsSubtracted: number
}

export interface WarmSummary {
  readonly indexKeys: number
  readonly entries: number
  readonly bytes: number
  /** Warming stopped because the next entry did not fit. */
  readonly full: boolean
}

/**
 * The journal of an island: configurations held in memory (reloaded when a
 * `nudge:journal` names their scope, see `watch`), `record` for the event path, recall through a
 * byte-bounded local cache warmed from the LRU journals, counters over their windows, and the
 * expiry sweep.
 */
export class Journal extends Effect.Service<Journal>()("@microdcs/journal/Journal", {
  effect: Effect.gen(function* () {
    const store = yield* JournalStore
    const configStore = yield* JournalConfigStore
    const options = yield* JournalOptions
    const clock = yield* JournalClock
    const cache = new JournalCache(options.cacheBytes)
    const configs = yield* makeHeldConfigurations(configStore, options.conditions)
    const reload = configs.reload

    /**
     * Keeps the configurations current for as long as the scope lives: reloads a scope when a
     * `nudge:journal` names it, and everything after a reconnect (nudges sent meanwhile are lost).
     * Returns once the first load is done; when it fails, `whenLoaded` fails too until a reload succeeds.
     */
    const watch: Effect.Effect<void, InvalidInput | StoreUnavailable | WrongType | ConnectionError, Nudges | Scope.Scope> = Effect.gen(function* () {
      const nudges = yield* Nudges
      const runtime = yield* Effect.runtime<never>()
      const run = (effect: Effect.Effect<void, unknown>) =>
        Runtime.runFork(runtime)(effect.pipe(Effect.catchAll((e) => Effect.logWarning("journal configuration reload failed").pipe(Effect.annotateLogs({ error: String(e) })))))
      yield* nudges.listen("journal", "journal-config", { onNudge: (scope) => run(reload(scope)), onReconnect: () => run(reload()) })
      yield* reload()
    }).pipe(Effect.tapError(configs.loadFailed))

    const heldJournal = configs.journal

    const configOf = (scope: string, journal: string) => Effect.map(heldJournal(scope, journal), (j) => j.config)

    const list = (scope?: string): Effect.Effect<ReadonlyArray<JournalConfig>> => Effect.sync(() => configs.all(scope).map((j) => j.config))

    /**
     * The journals of `scope` as `record` sees them: `JournalNotLoaded` when the scope's
     * configurations have not been read (by a load of every scope or of this one), where `list`
     * would answer "none".
     */
    const journalsOf = (scope: string): Effect.Effect<ReadonlyArray<JournalConfig>, JournalNotLoaded> =>
      Effect.map(configs.loaded(scope), () => configs.ofScope(scope).map((j) => j.config))

    /** Validates, stores and holds one journal's configuration (the JSON form); every problem listed on refusal. */
    const configure = (scope: string, input: unknown): Effect.Effect<{ readonly config: JournalConfig; readonly created: boolean }, JournalConfigInvalid | InvalidInput | WrongType | ConnectionError> =>
      Effect.tap(configStore.put(scope, input, options.conditions), () => reload(scope))

    const remove = (scope: string, journal: string): Effect.Effect<void, JournalNotFound | InvalidInput | WrongType | ConnectionError> =>
      Effect.tap(configStore.remove(scope, journal), () => reload(scope))

    const insert = (scope: string, journal: string, event: JournalEvent): Effect.Effect<InsertOutcome, JournalNotFound | JournalUnreadable | InvalidInput | WrongType | ConnectionError> =>
      Effect.flatMap(heldJournal(scope, journal), (j) => store.insert(j.config, event, clock.now(), j.predicates))

    /**
     * Journals one event in every journal whose types name its type: of `scope`, or of every
     * scope when none is given. What each journal did comes back (inserted or duplicate).
     * `JournalNotLoaded` when the configurations of `scope` (without one: of any scope) have not
     * been read yet: an empty answer would claim that no journal names the event.
     */
    const record = (
      event: JournalEvent,
      where: { readonly scope?: string | undefined } = {}
    ): Effect.Effect<ReadonlyArray<Recorded>, JournalNotLoaded | InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        yield* configs.loaded(where.scope)
        const now = clock.now()
        const targets = configs.all(where.scope).filter((j) => j.config.types.includes(event.type))
        return yield* Effect.forEach(targets, (j) =>
          Effect.map(store.insert(j.config, event, now, j.predicates), (outcome) => ({ ...outcome, scope: j.config.scope, journal: j.config.name }))
        )
      })

    const searchKeyOf = (config: JournalConfig, searchKey: string): Effect.Effect<void, InvalidInput> =>
      config.searchKeys.some((s) => s.name === searchKey)
        ? Effect.void
        : Effect.fail(
            new InvalidInput({
              field: "searchKey",
              message: `journal '${config.name}' has no search key '${searchKey}' (it has ${config.searchKeys.map((s) => s.name).join(", ") || "none"})`
            })
          )

    /** The newest entries of one search-key value, decoded; stamps the value's index key in the journal's LRU. */
    const recall = (
      scope: string,
      journal: string,
      searchKey: string,
      value: string,
      recallOptions: RecallOptions = {}
    ): Effect.Effect<ReadonlyArray<JournalEntry>, JournalNotFound | JournalUnreadable | JournalReadError> =>
      Effect.gen(function* () {
        const config = yield* configOf(scope, journal)
        yield* searchKeyOf(config, searchKey)
        const read = { limit: recallOptions.limit ?? 20, since: recallOptions.since, now: clock.now() }
        // The script reads and stamps in one step and brings the payloads: for a stamping recall without a cache.
        const byIds = cache.enabled || recallOptions.stamp === false
        const rows = byIds
          ? yield* store.recallIds(scope, journal, searchKey, value, { ...read, stamp: recallOptions.stamp })
          : yield* store.recallRows(scope, journal, searchKey, value, { ...read, withPayloads: true })
        const missing = rows.filter((r) => r.payload === null && !cache.has(JournalCache.keyOf(scope, journal, r.id)))
        const fetched = byIds ? yield* store.payloads(scope, journal, missing.map((r) => r.id)) : []
        const fresh = new Map(missing.map((r, i) => [r.id, fetched[i] ?? null]))
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

    const counterOf = (config: JournalConfig, counter: string): Effect.Effect<CounterConfig, JournalNotFound> => {
      const found = config.counters.find((c) => c.name === counter)
      return found ? Effect.succeed(found) : Effect.fail(new JournalNotFound({ scope: config.scope, journal: config.name, counter }))
    }

    /** A counter's total for one value over its window as of now (exact before the sweep ran). */
    const counter = (scope: string, journal: string, counterName: string, value: string): Effect.Effect<number, JournalNotFound | JournalUnreadable | InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        const config = yield* configOf(scope, journal)
        return yield* store.counterValue(config, yield* counterOf(config, counterName), value, clock.now())
      })

    /**
     * The counters a recipe transition names (`counter.nok_torque_1h`), for the runtime to read
     * before it calls the pure core: counter names are unique in a scope, and `values` gives the
     * value of each search key (from the step's results or the job order). A counter whose search
     * key has no value is left out; an unknown name is `JournalNotFound`, and a scope whose
     * configurations have not been read yet is `JournalNotLoaded`.
     */
    const counterValues = (
      scope: string,
      names: ReadonlyArray<string>,
      values: Readonly<Record<string, string>>
    ): Effect.Effect<Readonly<Record<string, number>>, JournalNotFound | JournalNotLoaded | InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        // Not read yet is not "no such counter": a transition must not decide on a counter it could not see.
        yield* configs.loaded(scope)
        const journals = configs.ofScope(scope)
        const now = clock.now()
        const readOne = (name: string): Effect.Effect<ReadonlyArray<readonly [string, number]>, JournalNotFound | InvalidInput | WrongType | ConnectionError> => {
          const owner = journals.find((j) => j.config.counters.some((c) => c.name === name))
          if (owner === undefined) return Effect.fail(new JournalNotFound({ scope, journal: "*", counter: name }))
          const config = owner.config.counters.find((c) => c.name === name)!
          const value = values[config.searchKey]
          return value === undefined ? Effect.succeed([]) : Effect.map(store.counterValue(owner.config, config, value, now), (total) => [[name, total] as const])
        }
        const read = yield* Effect.forEach(names, readOne, { concurrency: "unbounded" })
        return Object.fromEntries(read.flat())
      })

    /**
     * One sweep: entries past retention of every held journal (of `scope`, when given), and
     * the counter buckets that left their windows, in batches (one script each) until none is due.
     */
    const sweep = (sweepOptions: { readonly scope?: string | undefined; readonly batch?: number | undefined } = {}): Effect.Effect<SweepSummary, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        const now = clock.now()
        const journals = yield* list(sweepOptions.scope)
        let entriesRemoved = 0
        let bytesRemoved = 0
        let bucketsSubtracted = 0
        for (const config of journals) {
          for (;;) {
            const step = yield* store.expireEntries(config, now, sweepOptions.batch ?? 100)
            entriesRemoved += step.removed
            bytesRemoved += step.bytes
            if (step.removed === 0 || step.due < (sweepOptions.batch ?? 100)) break
          }
        }
        for (const scope of new Set(journals.map((j) => j.scope))) {
          for (;;) {
            const step = yield* store.expireBuckets(scope, now, sweepOptions.batch ?? 200)
            bucketsSubtracted += step.subtracted
            if (step.subtracted === 0 || step.due < (sweepOptions.batch ?? 200)) break
          }
        }
        return { entriesRemoved, bytesRemoved, bucketsSubtracted }
      })

    /**
     * Fills the local cache from the most recently recalled index keys of every held journal
     * (their `journal:lru`), most recent first, and stops at the first entry that does not fit:
     * no scan of the payloads, so many processes starting at once do not stampede Valkey.
     */
    const warm: Effect.Effect<WarmSummary, JournalReadError> = Effect.gen(function* () {
      if (!cache.enabled) return { indexKeys: 0, entries: 0, bytes: 0, full: false }
      const journals = yield* list()
      const used = (yield* Effect.forEach(journals, (c) => store.recentlyUsed(c.scope, c.name, options.warmIndexKeys))).flat().sort((a, b) => b.at - a.at)
      let indexKeys = 0
      let entries = 0
      for (const { indexKey } of used) {
        const parts = store.parseIndexKey(indexKey)
        if (parts === undefined) continue
        indexKeys++
        // A corrupted index key (another type) warms nothing, and does not stop the warming.
        const all = yield* store.indexIds(indexKey, options.warmEntriesPerKey).pipe(Effect.catchTag("WrongType", () => Effect.succeed(null)))
        if (all === null) continue
        if (all.length === 0) yield* store.forgetIfEmpty(indexKey) // stamped by a recall that found nothing
        const ids = all.filter((id) => !cache.has(JournalCache.keyOf(parts.scope, parts.journal, id)))
        const payloads = yield* store.payloads(parts.scope, parts.journal, ids)
        for (const [i, bytes] of payloads.entries()) {
          if (bytes === null) continue
          if (!cache.fits(bytes.length)) return { indexKeys, entries, bytes: cache.bytes, full: true }
          const event = yield* store.decode(parts.scope, parts.journal, ids[i]!, bytes)
          cache.set(JournalCache.keyOf(parts.scope, parts.journal, ids[i]!), { event, encodedBytes: bytes.length })
          entries++
        }
      }
      return { indexKeys, entries, bytes: cache.bytes, full: false }
    })

    const figures = (scope: string): Effect.Effect<ReadonlyArray<JournalFigures>, InvalidInput | WrongType | ConnectionError> => store.figures(scope)

    return {
      reload,
      watch,
      list,
      journalsOf,
      config: configOf,
      /** The stored configurations this process could not read (of `scope`, when given), with their problems. */
      unreadable: (scope?: string): Effect.Effect<ReadonlyArray<UnreadableConfig>> => Effect.sync(() => configs.unreadable(scope)),
      whenLoaded: configs.whenLoaded,
      configure,
      remove,
      insert,
      record,
      recall,
      counter,
      counterValues,
      sweep,
      warm,
      figures,
      cache: { get bytes() { return cache.bytes }, get entries() { return cache.entries }, maxBytes: cache.maxBytes }
    } as const
  }),
  dependencies: [JournalStore.Default, JournalConfigStore.Default]
}) {}
