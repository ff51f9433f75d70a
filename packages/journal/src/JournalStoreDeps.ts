import { Effect } from "effect"
import { checkKeyPart, type KeyPartError, type TemplateParts } from "@microdcs/keyschema"
import { InvalidInput, type ValkeyService } from "@microdcs/store"
import type { FieldTable } from "./EntryCodec.js"
import type { JournalKeySchema, JournalTemplates } from "./JournalKeys.js"

/** What the journal store's functions share: the connection, the key schema and the field tables in memory. */
export interface JournalStoreDeps {
  readonly valkey: ValkeyService
  readonly keys: JournalKeySchema
  /** Field tables by payload key; they only grow, so a table in memory is never wrong, only short. */
  readonly tables: Map<string, FieldTable>
}

/** Keys from parts that were checked (scope and names by the config, values at insert): building cannot fail. */
export const journalKey = <F extends keyof JournalTemplates & string>(
  deps: JournalStoreDeps,
  family: F,
  parts: TemplateParts<JournalTemplates[F]>
): string => {
  const built = deps.keys.key(family, parts)
  if (typeof built !== "string") throw new Error(`a checked part formed no key: ${built.message}`)
  return built
}

const invalid = (error: KeyPartError): InvalidInput => new InvalidInput({ field: error.name, message: error.message })

export const checked = (name: string, value: string): Effect.Effect<string, InvalidInput> => {
  const error = checkKeyPart(name, value)
  return error ? Effect.fail(invalid(error)) : Effect.succeed(value)
}

export const journalParts = (scope: string, journal: string) =>
  Effect.andThen(checked("scope", scope), checked("journal", journal)).pipe(Effect.as({ scope, journal }))
