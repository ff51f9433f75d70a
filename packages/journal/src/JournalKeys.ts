import { Effect } from "effect"
import { type CoreFamilyTemplates, defineKeyFamilies, KeyFamilyError, type KeySchemaOf } from "@microdcs/keyschema"
import type { ValkeyService } from "@microdcs/store"

/**
 * The journal's key families, registered on the island's schema with
 * `valkey.keys.extend`, so they share the prefix, the part encoding and the parser with the core
 * ones. Every family starts with a literal of its own (`journal`, `counter`), so none can clash
 * with a core family.
 */
export const journalKeyFamilies = defineKeyFamilies({
  /** entry id → encoded entry. */
  journalPayload: "journal:payload:{scope}:{journal}",
  /** The index keys that reference one entry (for its removal). */
  journalEntry: "journal:entry:{scope}:{journal}:{entryId}",
  /** Entry ids of one search-key value, score = reference time (ms). */
  journalIndex: "journal:index:{scope}:{journal}:{searchKey}:{value}",
  /** Every entry id, score = reference time: the access path of the expiry sweep. */
  journalRefdate: "journal:refdate:{scope}:{journal}",
  /** Search-key value → its latest reference time. */
  journalLatest: "journal:latest:{scope}:{journal}:{searchKey}",
  /** Field name → small integer, assigned once by the insert script, never reused. */
  journalFields: "journal:fields:{scope}:{journal}",
  /** Index key → last recall time: what the cache warms first. */
  journalLru: "journal:lru:{scope}:{journal}",
  /** Journal → number of entries. */
  journalCount: "journal:count:{scope}",
  /** Journal → bytes of its encoded entries. */
  journalBytes: "journal:bytes:{scope}",
  /** Journal name → its configuration (JSON). */
  journalConfig: "journal:config:{scope}",
  /** Every scope with at least one journal configured. */
  journalScopes: "journal:scopes",
  /** Search-key value → current total of one counter. */
  counterTotal: "counter:{scope}:{journal}:{counter}",
  /** Bucket start (ms) → amount added in that bucket, for one counter and value. */
  counterBucket: "counter:bucket:{scope}:{journal}:{counter}:{value}",
  /** `{journal}|{counter}|{value}|{bucket}` (parts encoded), score = when the bucket leaves the window. */
  counterExpiry: "counter:expiry:{scope}"
})

export type JournalKeyFamily = keyof (typeof journalKeyFamilies)["templates"]

/** The templates of the island's schema with the journal's families registered. */
export type JournalTemplates = CoreFamilyTemplates & (typeof journalKeyFamilies)["templates"]

/** The island's key schema with the journal's families registered. */
export type JournalKeySchema = KeySchemaOf<JournalTemplates>

/** The island's schema extended with the journal's families; a refusal is a defect (they are the journal's own). */
export const journalKeysOf = (valkey: ValkeyService): Effect.Effect<JournalKeySchema> => {
  const keys = valkey.keys.extend(journalKeyFamilies)
  return keys instanceof KeyFamilyError ? Effect.die(keys) : Effect.succeed(keys)
}
