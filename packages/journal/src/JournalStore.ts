import { Effect } from "effect"
import { checkKeyPart, dedupeHash, KeyFamilyError, type KeyPartError } from "@microdcs/keyschema"
import {
  type ConnectionError,
  InvalidInput,
  KeyReads,
  typedCommand,
  typedPipeline,
  Valkey,
  type WrongType,
  wrongTypeError
} from "@microdcs/store"
import { bucketStart, expiresAt, expiryMember, parseExpiryMember, spanMs } from "./CounterBuckets.js"
import { decodeEntry, EntryDecodeError, encodeEntry, FieldTable, lacksFields } from "./EntryCodec.js"
import { numberAt, searchValueAt } from "./EventPath.js"
import type { CounterConfig, JournalConfig } from "./JournalConfig.js"
import { CorruptEntry } from "./JournalErrors.js"
import { journalKeyFamilies } from "./JournalKeys.js"
import {
  counterExpire,
  counterRepair,
  type ExpireEntry,
  type InsertCounter,
  type InsertSearchKey,
  journalExpire,
  journalInsert,
  journalRecall,
  type RecalledRow
} from "./JournalScripts.js"

/** A CloudEvent as the journal records it: the attributes, extensions and `data`. */
export interface JournalEvent {
  readonly id: string
  readonly source: string
  readonly type: string
  readonly time?: string | undefined
  readonly subject?: string | undefined
  readonly data?: unknown
  readonly [attribute: string]: unknown
}

/** One recalled entry: its id (the event's dedupe hash), reference time and the event. */
export interface JournalEntry {
  readonly id: string
  readonly time: number
  readonly event: unknown
}

export type InsertOutcome = { readonly status: "inserted" | "duplicate"; readonly id: string; readonly bytes: number }

/** The compiled `when` of each counter, by counter name (absent: every entry counts). */
export type CounterPredicates = ReadonlyMap<string, (event: unknown) => boolean>

export interface JournalFigures {
  readonly journal: string
  readonly entries: number
  readonly bytes: number
}

const invalid = (error: KeyPartError): InvalidInput => new InvalidInput({ field: error.name, message: error.message })

/**
 * The journal's data in Valkey: insert, recall, counters and the expiry
 * sweeps, each one script; the field tables of the journals it touched, in memory. Stateless
 * about configuration: every call takes the journal's `JournalConfig`.
 */
export class JournalStore extends Effect.Service<JournalStore>()("@microdcs/journal/JournalStore", {
  effect: Effect.gen(function* () {
    const valkey = yield* Valkey
    const keys = valkey.keys.extend(journalKeyFamilies)
    if (keys instanceof KeyFamilyError) return yield* Effect.die(keys)

    /** Keys from parts that were checked (scope and names by the config, values at insert): building cannot fail. */
    const k = <F extends Parameters<typeof keys.key>[0]>(family: F, parts: Parameters<typeof keys.key<F>>[1]): string => {
      const built = keys.key(family, parts)
      if (typeof built !== "string") throw new Error(`a checked part formed no key: ${built.message}`)
      return built
    }
    const checked = (name: string, value: string): Effect.Effect<string, InvalidInput> => {
      const error = checkKeyPart(name, value)
      return error ? Effect.fail(invalid(error)) : Effect.succeed(value)
    }
    const journalParts = (scope: string, journal: string) =>
      Effect.zipRight(checked("scope", scope), checked("journal", journal)).pipe(Effect.as({ scope, journal }))

    // Field tables by payload key; they only grow, so a table in memory is never wrong, only short.
    const tables = new Map<string, FieldTable>()
    const loadTable = (scope: string, journal: string): Effect.Effect<FieldTable, WrongType | ConnectionError> => {
      const fieldsKey = k("journalFields", { scope, journal })
      return typedCommand(valkey, "journal fields", fieldsKey, "hash", (c) => c.hgetall(fieldsKey)).pipe(
        Effect.map((stored) => {
          const table = tables.get(fieldsKey) ?? new FieldTable()
          for (const [name, index] of Object.entries(stored)) table.learn(name, Number(index))
          tables.set(fieldsKey, table)
          return table
        })
      )
    }
    const tableOf = (scope: string, journal: string) => {
      const known = tables.get(k("journalFields", { scope, journal }))
      return known ? Effect.succeed(known) : loadTable(scope, journal)
    }

    const decode = (scope: string, journal: string, id: string, bytes: Buffer): Effect.Effect<unknown, CorruptEntry | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        const attempt = (table: FieldTable) => {
          try {
            return { event: decodeEntry(bytes, table) }
          } catch (error) {
            return { error }
          }
        }
        let result = attempt(yield* tableOf(scope, journal))
        // Another writer named a field since the table was read: read it again, once.
        if ("error" in result && lacksFields(result.error)) result = attempt(yield* loadTable(scope, journal))
        if ("event" in result) return result.event
        const message = result.error instanceof EntryDecodeError || result.error instanceof Error ? result.error.message : String(result.error)
        return yield* new CorruptEntry({ key: k("journalPayload", { scope, journal }), id, message })
      })

    const referenceTime = (config: JournalConfig, event: JournalEvent, now: number): Effect.Effect<number, InvalidInput> => {
      if (config.reference === "arrival") return Effect.succeed(now)
      const time = typeof event.time === "string" ? Date.parse(event.time) : Number.NaN
      return Number.isFinite(time)
        ? Effect.succeed(time)
        : Effect.fail(new InvalidInput({ field: "time", message: `journal '${config.name}' takes the event time as reference, and the event has no valid time` }))
    }

    /**
     * Records one event in one journal: everything in one script, or nothing. The same event
     * (source, id) twice is a `duplicate` that changes nothing.
     */
    const insert = (
      config: JournalConfig,
      event: JournalEvent,
      now: number,
      predicates: CounterPredicates = new Map()
    ): Effect.Effect<InsertOutcome, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        const { scope, name: journal } = config
        if (typeof event.source !== "string" || event.source === "" || typeof event.id !== "string" || event.id === "") {
          return yield* new InvalidInput({ field: "event", message: "an event needs a non-empty source and id" })
        }
        const id = dedupeHash(event.source, event.id)
        const ref = yield* referenceTime(config, event, now)
        const values = new Map<string, string>()
        const searchKeys: Array<InsertSearchKey> = []
        for (const searchKey of config.searchKeys) {
          const value = searchValueAt(event, searchKey.path)
          if (value === undefined) continue
          yield* checked(`search key ${searchKey.name}`, value)
          values.set(searchKey.name, value)
          searchKeys.push({
            indexKey: k("journalIndex", { scope, journal, searchKey: searchKey.name, value }),
            latestKey: k("journalLatest", { scope, journal, searchKey: searchKey.name }),
            value
          })
        }
        const counters: Array<InsertCounter> = []
        for (const counter of config.counters) {
          const value = values.get(counter.searchKey)
          if (value === undefined) continue
          const when = predicates.get(counter.name)
          if (when !== undefined && !when(event)) continue
          const amount = counter.sum === undefined ? 1 : numberAt(event, counter.sum)
          if (amount === undefined) continue
          const bucket = bucketStart(counter, ref)
          const expires = expiresAt(counter, bucket)
          if (expires <= now) continue // already out of the window: it would never count
          counters.push({
            totalKey: k("counterTotal", { scope, journal, counter: counter.name }),
            bucketKey: k("counterBucket", { scope, journal, counter: counter.name, value }),
            value,
            bucket,
            amount,
            expiresAt: expires,
            member: expiryMember(journal, counter.name, value, bucket)
          })
        }
        const table = yield* tableOf(scope, journal)
        const encoded = encodeEntry(event, table, config.compression)
        if (encoded.bytes.length > valkey.maxDocumentBytes) {
          return yield* new InvalidInput({ field: "event", message: `the encoded entry is ${encoded.bytes.length} bytes; the limit is ${valkey.maxDocumentBytes}` })
        }
        const reply = yield* valkey.script(
          journalInsert,
          {
            payload: k("journalPayload", { scope, journal }),
            entry: k("journalEntry", { scope, journal, entryId: id }),
            refdate: k("journalRefdate", { scope, journal }),
            fields: k("journalFields", { scope, journal }),
            count: k("journalCount", { scope }),
            bytes: k("journalBytes", { scope }),
            expiry: k("counterExpiry", { scope })
          },
          { id, ref, payload: encoded.bytes, journal, newFields: encoded.newFields, searchKeys, counters }
        )
        switch (reply.status) {
          case "ok":
            for (const [name, index] of reply.fields) table.learn(name, index)
            return { status: "inserted", id, bytes: encoded.bytes.length } as const
          case "duplicate":
            return { status: "duplicate", id, bytes: 0 } as const
          case "wrongtype":
            return yield* wrongTypeError(reply)
          case "invalid":
            return yield* Effect.dieMessage(`journal-insert refused its own arguments: ${reply.what}`)
        }
      })

    const indexKey = (scope: string, journal: string, searchKey: string, value: string) =>
      Effect.gen(function* () {
        yield* journalParts(scope, journal)
        yield* checked("searchKey", searchKey)
        yield* checked("value", value)
        return k("journalIndex", { scope, journal, searchKey, value })
      })

    /** The newest entry ids (and, with payloads, their bytes) of one value, newest first; stamps the LRU. */
    const recallRows = (
      scope: string,
      journal: string,
      searchKey: string,
      value: string,
      options: { readonly limit: number; readonly since?: number | undefined; readonly now: number; readonly withPayloads: boolean }
    ): Effect.Effect<ReadonlyArray<RecalledRow>, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        if (!Number.isSafeInteger(options.limit) || options.limit < 1 || options.limit > 10_000) {
          return yield* new InvalidInput({ field: "limit", message: `limit must be an integer from 1 to 10000, got ${options.limit}` })
        }
        if (options.since !== undefined && !Number.isFinite(options.since)) {
          return yield* new InvalidInput({ field: "since", message: "since must be a time (epoch ms)" })
        }
        const index = yield* indexKey(scope, journal, searchKey, value)
        const reply = yield* valkey.scriptWithBytes(
          journalRecall,
          { index, payload: k("journalPayload", { scope, journal }), lru: k("journalLru", { scope, journal }) },
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
    const recallIds = (
      scope: string,
      journal: string,
      searchKey: string,
      value: string,
      options: { readonly limit: number; readonly since?: number | undefined; readonly now: number; readonly stamp?: boolean | undefined }
    ): Effect.Effect<ReadonlyArray<RecalledRow>, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        if (!Number.isSafeInteger(options.limit) || options.limit < 1 || options.limit > 10_000) {
          return yield* new InvalidInput({ field: "limit", message: `limit must be an integer from 1 to 10000, got ${options.limit}` })
        }
        if (options.since !== undefined && !Number.isFinite(options.since)) {
          return yield* new InvalidInput({ field: "since", message: "since must be a time (epoch ms)" })
        }
        const index = yield* indexKey(scope, journal, searchKey, value)
        const lru = k("journalLru", { scope, journal })
        const keys = options.stamp === false ? [index] : [index, lru]
        const [found] = yield* typedPipeline<ReadonlyArray<string>>(valkey, "journal recall", keys, "zset", (p, key) =>
          key === index ? p.zrevrangebyscore(index, "+inf", options.since ?? "-inf", "WITHSCORES", "LIMIT", 0, options.limit) : p.zadd(lru, options.now, index)
        )
        const rows: Array<RecalledRow> = []
        for (let i = 0; found !== undefined && i + 1 < found.length; i += 2) rows.push({ id: found[i]!, time: Number(found[i + 1]), payload: null })
        return rows
      })

    /** Drops an index key from its journal's LRU when it holds no entry (warming found it empty). */
    const forgetIfEmpty = (indexKey: string): Effect.Effect<void, WrongType | ConnectionError> => {
      const parts = parseIndexKey(indexKey)
      if (parts === undefined) return Effect.void
      const lru = k("journalLru", { scope: parts.scope, journal: parts.journal })
      return typedCommand(valkey, "journal lru forget", lru, "zset", (c) =>
        c.exists(indexKey).then((n) => (n === 0 ? c.zrem(lru, indexKey) : 0))
      ).pipe(Effect.asVoid)
    }

    /** Encoded entries by id (one HMGET); a missing one is `null` (swept meanwhile). */
    const payloads = (scope: string, journal: string, ids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Buffer | null>, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        if (ids.length === 0) return []
        yield* journalParts(scope, journal)
        const key = k("journalPayload", { scope, journal })
        return yield* KeyReads.hashValues(valkey, key, ids, "bytes")
      })

    const counterValue = (
      config: JournalConfig,
      counter: CounterConfig,
      value: string,
      now: number
    ): Effect.Effect<number, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        yield* checked("value", value)
        const totalKey = k("counterTotal", { scope: config.scope, journal: config.name, counter: counter.name })
        const bucketKey = k("counterBucket", { scope: config.scope, journal: config.name, counter: counter.name, value })
        // One round trip of two plain reads (cheaper than a script): the stored total, minus every
        // bucket that left the window but was not swept yet, so the value is exact before the sweep.
        const [total, buckets] = yield* typedPipeline<string | null | Record<string, string>>(valkey, "counter read", [totalKey, bucketKey], "hash", (p, key) =>
          key === totalKey ? p.hget(key, value) : p.hgetall(key)
        )
        const now_ = now
        const span = spanMs(counter)
        let live = typeof total === "string" ? Number(total) : 0
        for (const [start, amount] of Object.entries((buckets ?? {}) as Record<string, string>)) {
          if (Number(start) + span <= now_) live -= Number(amount)
        }
        return live
      })

    /**
     * Removes up to `batch` entries past the journal's retention (one script); `removed` < `batch`
     * means none is left. Safe with several sweepers: the script re-checks what was read.
     */
    const expireEntries = (config: JournalConfig, now: number, batch = 100): Effect.Effect<{ readonly removed: number; readonly bytes: number; readonly due: number }, WrongType | ConnectionError> =>
      Effect.gen(function* () {
        const { scope, name: journal } = config
        const refdate = k("journalRefdate", { scope, journal })
        const cutoff = now - config.retentionMs
        for (let attempt = 1; attempt <= 5; attempt++) {
          const ids = yield* typedCommand(valkey, "journal due entries", refdate, "zset", (c) => c.zrangebyscore(refdate, "-inf", cutoff, "LIMIT", 0, batch))
          if (ids.length === 0) return { removed: 0, bytes: 0, due: 0 }
          const entryKeys = ids.map((entryId) => k("journalEntry", { scope, journal, entryId }))
          const sets = yield* typedPipeline<ReadonlyArray<string>>(valkey, "journal entry sets", entryKeys, "set", (p, key) => p.smembers(key))
          const entries: Array<ExpireEntry> = ids.map((id, i) => ({
            id,
            entryKey: entryKeys[i]!,
            indexes: (sets[i] ?? []).flatMap((index) => {
              const parsed = keys.parse(index)
              if (parsed?.family !== "journalIndex") return [] // not ours: the check reports it
              const parts = parsed.parts as { readonly searchKey: string; readonly value: string }
              return [{ indexKey: index, latestKey: k("journalLatest", { scope, journal, searchKey: parts.searchKey }), value: parts.value }]
            })
          }))
          // A foreign member in a reverse set would make the script's re-check fail forever: keep them out of the count.
          const clean = entries.filter((e, i) => e.indexes.length === (sets[i] ?? []).length)
          if (clean.length === 0) return { removed: 0, bytes: 0, due: ids.length }
          const reply = yield* valkey.script(
            journalExpire,
            {
              payload: k("journalPayload", { scope, journal }),
              refdate,
              count: k("journalCount", { scope }),
              bytes: k("journalBytes", { scope }),
              lru: k("journalLru", { scope, journal })
            },
            { journal, cutoff, entries: clean }
          )
          if (reply.status === "ok") return { removed: reply.removed, bytes: reply.bytes, due: ids.length }
          if (reply.status === "wrongtype") return yield* wrongTypeError(reply)
        }
        return { removed: 0, bytes: 0, due: 0 }
      })

    /** Subtracts up to `batch` buckets that left their window from their totals (one script). */
    const expireBuckets = (scope: string, now: number, batch = 200): Effect.Effect<{ readonly subtracted: number; readonly due: number }, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        yield* checked("scope", scope)
        const expiry = k("counterExpiry", { scope })
        const members = yield* typedCommand(valkey, "counter due buckets", expiry, "zset", (c) => c.zrangebyscore(expiry, "-inf", now, "LIMIT", 0, batch))
        if (members.length === 0) return { subtracted: 0, due: 0 }
        const buckets = members.flatMap((member) => {
          const parsed = parseExpiryMember(member)
          if (parsed === undefined) return []
          return [{
            member,
            totalKey: k("counterTotal", { scope, journal: parsed.journal, counter: parsed.counter }),
            bucketKey: k("counterBucket", { scope, journal: parsed.journal, counter: parsed.counter, value: parsed.value }),
            value: parsed.value,
            bucket: parsed.bucket
          }]
        })
        const reply = yield* valkey.script(counterExpire, { expiry }, { now, buckets })
        return reply.status === "ok" ? { subtracted: reply.subtracted, due: members.length } : yield* wrongTypeError(reply)
      })

    /** Sets a counter total to the sum of its stored buckets (the rebuild's repair). */
    const repairTotal = (scope: string, journal: string, counter: string, value: string) =>
      Effect.gen(function* () {
        const reply = yield* valkey.script(
          counterRepair,
          { total: k("counterTotal", { scope, journal, counter }), buckets: k("counterBucket", { scope, journal, counter, value }) },
          { value }
        )
        return reply.status === "ok" ? reply.total : yield* wrongTypeError(reply)
      })

    /** Entries and bytes per journal of a scope (`journal:count`, `journal:bytes`). */
    const figures = (scope: string): Effect.Effect<ReadonlyArray<JournalFigures>, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        yield* checked("scope", scope)
        const [counts, bytes] = yield* typedPipeline<Record<string, string>>(
          valkey, "journal figures", [k("journalCount", { scope }), k("journalBytes", { scope })], "hash", (p, key) => p.hgetall(key)
        )
        const names = [...new Set([...Object.keys(counts ?? {}), ...Object.keys(bytes ?? {})])].sort()
        return names.map((journal) => ({ journal, entries: Number(counts?.[journal] ?? 0), bytes: Number(bytes?.[journal] ?? 0) }))
      })

    /** The most recently recalled index keys of a journal, newest first (what warming reads). */
    const recentlyUsed = (scope: string, journal: string, limit: number): Effect.Effect<ReadonlyArray<{ readonly indexKey: string; readonly at: number }>, WrongType | ConnectionError> => {
      const lru = k("journalLru", { scope, journal })
      return typedCommand(valkey, "journal lru", lru, "zset", (c) => c.zrevrange(lru, 0, limit - 1, "WITHSCORES")).pipe(
        Effect.map((flat) => {
          const rows: Array<{ indexKey: string; at: number }> = []
          for (let i = 0; i + 1 < flat.length; i += 2) rows.push({ indexKey: flat[i]!, at: Number(flat[i + 1]) })
          return rows
        })
      )
    }

    /** The newest entry ids of an index key read from the LRU (warming), without stamping it again. */
    const indexIds = (indexKey: string, limit: number): Effect.Effect<ReadonlyArray<string>, WrongType | ConnectionError> =>
      typedCommand(valkey, "journal index", indexKey, "zset", (c) => c.zrevrange(indexKey, 0, limit - 1))

    /** Which journal an index key belongs to, when it is one of ours. */
    const parseIndexKey = (key: string) => {
      const parsed = keys.parse(key)
      return parsed?.family === "journalIndex" ? (parsed.parts as { readonly scope: string; readonly journal: string; readonly searchKey: string; readonly value: string }) : undefined
    }

    return {
      insert,
      recallRows,
      recallIds,
      forgetIfEmpty,
      payloads,
      decode,
      counterValue,
      expireEntries,
      expireBuckets,
      repairTotal,
      figures,
      recentlyUsed,
      indexIds,
      parseIndexKey,
      tableOf
    } as const
  })
}) {}
