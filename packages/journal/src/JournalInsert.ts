import { Effect } from "effect"
import { dedupeHash } from "@microdcs/keyschema"
import { type ConnectionError, InvalidInput, type WrongType, wrongTypeError } from "@microdcs/store"
import { bucketStart, expiresAt, expiryMember } from "./CounterBuckets.js"
import { encodeEntry, type FieldTable } from "./EntryCodec.js"
import { numberAt, searchValueAt } from "./EventPath.js"
import { tableOf } from "./FieldTables.js"
import type { JournalConfig } from "./JournalConfig.js"
import { type InsertArgs, type InsertCounter, type InsertSearchKey, journalInsert } from "./JournalScripts.js"
import { checked, journalKey, type JournalStoreDeps } from "./JournalStoreDeps.js"

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

export type InsertOutcome = { readonly status: "inserted" | "duplicate"; readonly id: string; readonly bytes: number }

/** The compiled `when` of each counter, by counter name (absent: every entry counts). */
export type CounterPredicates = ReadonlyMap<string, (event: unknown) => boolean>

const referenceTime = (config: JournalConfig, event: JournalEvent, now: number): Effect.Effect<number, InvalidInput> => {
  if (config.reference === "arrival") return Effect.succeed(now)
  const time = typeof event.time === "string" ? Date.parse(event.time) : Number.NaN
  return Number.isFinite(time)
    ? Effect.succeed(time)
    : Effect.fail(new InvalidInput({ field: "time", message: `journal '${config.name}' takes the event time as reference, and the event has no valid time` }))
}

/** The event's value of each search key it has (checked as key parts), and the index updates they make. */
const searchKeysOf = (deps: JournalStoreDeps, config: JournalConfig, event: JournalEvent) =>
  Effect.gen(function* () {
    const { scope, name: journal } = config
    const values = new Map<string, string>()
    const searchKeys: Array<InsertSearchKey> = []
    for (const searchKey of config.searchKeys) {
      const value = searchValueAt(event, searchKey.path)
      if (value === undefined) continue
      yield* checked(`search key ${searchKey.name}`, value)
      values.set(searchKey.name, value)
      searchKeys.push({
        indexKey: journalKey(deps, "journalIndex", { scope, journal, searchKey: searchKey.name, value }),
        latestKey: journalKey(deps, "journalLatest", { scope, journal, searchKey: searchKey.name }),
        value
      })
    }
    return { values, searchKeys }
  })

interface CounterInput {
  readonly event: JournalEvent
  readonly values: ReadonlyMap<string, string>
  readonly ref: number
  readonly now: number
  readonly predicates: CounterPredicates
}

/** What the event adds to each counter it counts for, in a bucket still inside the counter's window. */
const countersOf = (deps: JournalStoreDeps, config: JournalConfig, input: CounterInput): Array<InsertCounter> => {
  const { scope, name: journal } = config
  const { event, values, ref, now, predicates } = input
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
      totalKey: journalKey(deps, "counterTotal", { scope, journal, counter: counter.name }),
      bucketKey: journalKey(deps, "counterBucket", { scope, journal, counter: counter.name, value }),
      value,
      bucket,
      amount,
      expiresAt: expires,
      member: expiryMember(journal, counter.name, value, bucket)
    })
  }
  return counters
}

/** The insert script's arguments but the journal's name. */
type EntryWrite = Omit<InsertArgs, "journal">

/** The insert script: the entry, its indexes, counters and figures at once; the table learns the fields it named. */
const writeEntry = (deps: JournalStoreDeps, config: JournalConfig, table: FieldTable, write: EntryWrite) =>
  Effect.gen(function* () {
    const { scope, name: journal } = config
    const { id } = write
    const reply = yield* deps.valkey.script(
      journalInsert,
      {
        payload: journalKey(deps, "journalPayload", { scope, journal }),
        entry: journalKey(deps, "journalEntry", { scope, journal, entryId: id }),
        refdate: journalKey(deps, "journalRefdate", { scope, journal }),
        fields: journalKey(deps, "journalFields", { scope, journal }),
        count: journalKey(deps, "journalCount", { scope }),
        bytes: journalKey(deps, "journalBytes", { scope }),
        expiry: journalKey(deps, "counterExpiry", { scope })
      },
      { ...write, journal }
    )
    switch (reply.status) {
      case "ok":
        for (const [name, index] of reply.fields) table.learn(name, index)
        return { status: "inserted", id, bytes: write.payload.length } as const
      case "duplicate":
        return { status: "duplicate", id, bytes: 0 } as const
      case "wrongtype":
        return yield* wrongTypeError(reply)
      case "invalid":
        return yield* Effect.die(new Error(`journal-insert refused its own arguments: ${reply.what}`))
    }
  })

/**
 * Records one event in one journal: everything in one script, or nothing. The same event
 * (source, id) twice is a `duplicate` that changes nothing.
 */
export const insert = (
  deps: JournalStoreDeps,
  config: JournalConfig,
  event: JournalEvent,
  now: number,
  predicates: CounterPredicates = new Map()
): Effect.Effect<InsertOutcome, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    if (typeof event.source !== "string" || event.source === "" || typeof event.id !== "string" || event.id === "") {
      return yield* new InvalidInput({ field: "event", message: "an event needs a non-empty source and id" })
    }
    const id = dedupeHash(event.source, event.id)
    const ref = yield* referenceTime(config, event, now)
    const { values, searchKeys } = yield* searchKeysOf(deps, config, event)
    const counters = countersOf(deps, config, { event, values, ref, now, predicates })
    const table = yield* tableOf(deps, config.scope, config.name)
    const encoded = encodeEntry(event, table, config.compression)
    if (encoded.bytes.length > deps.valkey.maxDocumentBytes) {
      return yield* new InvalidInput({ field: "event", message: `the encoded entry is ${encoded.bytes.length} bytes; the limit is ${deps.valkey.maxDocumentBytes}` })
    }
    return yield* writeEntry(deps, config, table, { id, ref, payload: encoded.bytes, newFields: encoded.newFields, searchKeys, counters })
  })
