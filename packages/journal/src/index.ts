export { journalKeyFamilies, type JournalKeyFamily } from "./JournalKeys.js"
export * from "./JournalConfig.js"
export { parseDuration, formatDuration } from "./Duration.js"
export { type JournalSummary, journalSummary } from "./JournalSummary.js"
export * from "./JournalErrors.js"
export { JournalClock } from "./JournalClock.js"
export { JournalOptions, type JournalSettings } from "./JournalOptions.js"
export {
  FieldTable,
  ENTRY_FORMAT_VERSION,
  encodeEntry,
  decodeEntry,
  EntryDecodeError,
  encodePlainMessagePack,
  decodePlainMessagePack,
  type Encoded
} from "./EntryCodec.js"
export { bucketStart, expiresAt, spanMs } from "./CounterBuckets.js"
export { JournalStore, type JournalEvent, type JournalEntry, type InsertOutcome, type JournalFigures, type CounterPredicates } from "./JournalStore.js"
export { JournalConfigStore, type UnreadableConfig } from "./JournalConfigStore.js"
export { JournalCache, ENTRY_OVERHEAD_BYTES } from "./JournalCache.js"
export { Journal, type RecallOptions, type Recorded, type SweepSummary, type WarmSummary, type JournalReadError } from "./Journal.js"
export { journalScripts } from "./JournalScripts.js"
export { journalIndexedFamily } from "./JournalIndexes.js"
export * from "./JournalConfigEvent.js"
export { indexedFamilies } from "./JournalExtension.js"
