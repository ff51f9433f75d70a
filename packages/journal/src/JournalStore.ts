import { Effect, Context, Layer } from "effect"
import { type ConnectionError, type InvalidInput, typedPipeline, Valkey, type WrongType } from "@microdcs/store"
import type { FieldTable } from "./EntryCodec.js"
import { decodeStored, tableOf } from "./FieldTables.js"
import type { CounterConfig, JournalConfig } from "./JournalConfig.js"
import { counterValue, expireBuckets, repairTotal } from "./JournalCounters.js"
import { expireEntries } from "./JournalExpiry.js"
import { type CounterPredicates, insert, type JournalEvent } from "./JournalInsert.js"
import { journalKeysOf } from "./JournalKeys.js"
import { forgetIfEmpty, indexIds, parseIndexKey, payloads, recallIds, recallRows, recentlyUsed } from "./JournalRecall.js"
import { checked, journalKey, type JournalStoreDeps } from "./JournalStoreDeps.js"

export type { CounterPredicates, InsertOutcome, JournalEvent } from "./JournalInsert.js"
export type { JournalEntry } from "./JournalRecall.js"

export interface JournalFigures {
  readonly journal: string
  readonly entries: number
  readonly bytes: number
}

/** Entries and bytes per journal of a scope (`journal:count`, `journal:bytes`). */
const figures = (deps: JournalStoreDeps, scope: string): Effect.Effect<ReadonlyArray<JournalFigures>, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    yield* checked("scope", scope)
    const [counts, bytes] = yield* typedPipeline<Record<string, string>>(
      deps.valkey, "journal figures", [journalKey(deps, "journalCount", { scope }), journalKey(deps, "journalBytes", { scope })], "hash", (p, key) => p.hgetall(key)
    )
    const names = [...new Set([...Object.keys(counts ?? {}), ...Object.keys(bytes ?? {})])].sort()
    return names.map((journal) => ({ journal, entries: Number(counts?.[journal] ?? 0), bytes: Number(bytes?.[journal] ?? 0) }))
  })

type RecallBounds = { readonly limit: number; readonly since?: number | undefined; readonly now: number }

/**
 * The journal's data in Valkey: insert, recall, counters and the expiry
 * sweeps, each one script; the field tables of the journals it touched, in memory. Stateless
 * about configuration: every call takes the journal's `JournalConfig`.
 */
export class JournalStore extends Context.Service<JournalStore>()("@microdcs/journal/JournalStore", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const deps: JournalStoreDeps = { valkey, keys: yield* journalKeysOf(valkey), tables: new Map<string, FieldTable>() }
    return {
      insert: (config: JournalConfig, event: JournalEvent, now: number, predicates?: CounterPredicates) => insert(deps, config, event, now, predicates),
      recallRows: (scope: string, journal: string, searchKey: string, value: string, options: RecallBounds & { readonly withPayloads: boolean }) =>
        recallRows(deps, scope, journal, searchKey, value, options),
      recallIds: (scope: string, journal: string, searchKey: string, value: string, options: RecallBounds & { readonly stamp?: boolean | undefined }) =>
        recallIds(deps, scope, journal, searchKey, value, options),
      forgetIfEmpty: (indexKey: string) => forgetIfEmpty(deps, indexKey),
      payloads: (scope: string, journal: string, ids: ReadonlyArray<string>) => payloads(deps, scope, journal, ids),
      decode: (scope: string, journal: string, id: string, bytes: Buffer) => decodeStored(deps, scope, journal, id, bytes),
      counterValue: (config: JournalConfig, counter: CounterConfig, value: string, now: number) => counterValue(deps, config, counter, value, now),
      expireEntries: (config: JournalConfig, now: number, batch?: number) => expireEntries(deps, config, now, batch),
      expireBuckets: (scope: string, now: number, batch?: number) => expireBuckets(deps, scope, now, batch),
      repairTotal: (scope: string, journal: string, counter: string, value: string) => repairTotal(deps, scope, journal, counter, value),
      figures: (scope: string) => figures(deps, scope),
      recentlyUsed: (scope: string, journal: string, limit: number) => recentlyUsed(deps, scope, journal, limit),
      indexIds: (indexKey: string, limit: number) => indexIds(deps, indexKey, limit),
      parseIndexKey: (key: string) => parseIndexKey(deps, key),
      tableOf: (scope: string, journal: string) => tableOf(deps, scope, journal)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
