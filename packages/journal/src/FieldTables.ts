import { Effect } from "effect"
import { type ConnectionError, typedCommand, type WrongType } from "@microdcs/store"
import { decodeEntry, EntryDecodeError, FieldTable, lacksFields } from "./EntryCodec.js"
import { CorruptEntry } from "./JournalErrors.js"
import { journalKey, type JournalStoreDeps } from "./JournalStoreDeps.js"

/** The field tables of the journals this process touched, read from Valkey once and grown as fields are named. */

export const loadTable = (deps: JournalStoreDeps, scope: string, journal: string): Effect.Effect<FieldTable, WrongType | ConnectionError> => {
  const fieldsKey = journalKey(deps, "journalFields", { scope, journal })
  return typedCommand(deps.valkey, "journal fields", fieldsKey, "hash", (c) => c.hgetall(fieldsKey)).pipe(
    Effect.map((stored) => {
      const table = deps.tables.get(fieldsKey) ?? new FieldTable()
      for (const [name, index] of Object.entries(stored)) table.learn(name, Number(index))
      deps.tables.set(fieldsKey, table)
      return table
    })
  )
}

export const tableOf = (deps: JournalStoreDeps, scope: string, journal: string) => {
  const known = deps.tables.get(journalKey(deps, "journalFields", { scope, journal }))
  return known ? Effect.succeed(known) : loadTable(deps, scope, journal)
}

const attemptDecode = (bytes: Buffer, table: FieldTable): { readonly event: unknown } | { readonly error: unknown } => {
  try {
    return { event: decodeEntry(bytes, table) }
  } catch (error) {
    return { error }
  }
}

export const decodeStored = (
  deps: JournalStoreDeps,
  scope: string,
  journal: string,
  id: string,
  bytes: Buffer
): Effect.Effect<unknown, CorruptEntry | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    let result = attemptDecode(bytes, yield* tableOf(deps, scope, journal))
    // Another writer named a field since the table was read: read it again, once.
    if ("error" in result && lacksFields(result.error)) result = attemptDecode(bytes, yield* loadTable(deps, scope, journal))
    if ("event" in result) return result.event
    const message = result.error instanceof EntryDecodeError || result.error instanceof Error ? result.error.message : String(result.error)
    return yield* new CorruptEntry({ key: journalKey(deps, "journalPayload", { scope, journal }), id, message })
  })
