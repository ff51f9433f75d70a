export * from "./Errors.js"
export * from "./ValkeyOptions.js"
export * as ValkeyLayer from "./Valkey.js"
export { Valkey, type ScriptResult, type ValkeyService, makeValkey } from "./Valkey.js"
export * from "./Document.js"
// A document DAO of one's own: the generic DAO, its spec, the input checks and the one reply mapping.
export * from "./DocumentDao.js"
export * from "./DocumentSpec.js"
export * from "./WriteReplies.js"
export { validateText, validateTexts } from "./Input.js"
export * from "./JobOrderDao.js"
export * from "./SfcStateDao.js"
// The read-recheck loop of a write whose keys depend on stored values; its test seam is in `@microdcs/store/testing`.
export { MAX_INDEX_RETRIES, moved, type Moved, readForWrite, retryWhileMoved } from "./IndexPrecondition.js"
export * from "./JobResponseDao.js"
export * from "./JobResponseFailures.js"
export { newestDeadLetters } from "./DeadLetterNewest.js"
export { failedResponseStates } from "./IndexJobResponseFailed.js"
export * from "./WorkMasterDao.js"
export * from "./DedupeStore.js"
export type { DoneMark } from "./DoneMark.js"
export type { CreateMarkingDoneError } from "./JobOrderCreateDone.js"
export * from "./ClaimHolders.js"
export { claimToken, claimTokenHolder } from "./ClaimToken.js"
export * from "./Lease.js"
export * from "./StartLease.js"
export * from "./ReferenceListDao.js"
export * from "./JobAcceptanceDao.js"
export * from "./ScopeRegistry.js"
export * from "./ChangeStream.js"
export * from "./PublisherCursors.js"
// Stream reads and their entries (the RESP decoders stay inside; the autoclaim metric is in `/testing`).
export type { ClaimedEntry, ClaimPage, DeadLetterEntry, PendingEntry, PendingSummary, StreamBatch, StreamEntry } from "./StreamEntries.js"
export {
  type DeadLetterMove,
  type DeadLetterOutcome,
  type DeadLetterPage,
  type DeadLetterStreamInfo,
  type PendingQuery,
  type ReadGroupOptions,
  type ScopedFamily,
  type ScopeStreamLength,
  ValkeyStreams
} from "./ValkeyStreams.js"
export * from "./DeadLetterRedrive.js"
export * from "./IndexMaintenance.js"
// What an index check reports; the per-member judgement helpers are in `@microdcs/store/testing`.
export {
  type DocumentFamily,
  type DocumentMissingFromIndex,
  type Inconsistency,
  inconsistencyId,
  type InconsistencyKind,
  type IndexEntryWithoutDocument,
  type IndexFamily,
  type MalformedDocument,
  type MemberDocument,
  type MemberIndexFamily,
  type MemberRule,
  type Membership,
  type ScopeNotRegistered,
  type StaleMember,
  type StalePointer,
  type WrongScore,
  type WrongTypeKey
} from "./IndexFacts.js"
export type { IndexPhase, RebuildOptions, RebuildProgress, RebuildSummary } from "./IndexRebuild.js"
export { INDEX_UPGRADE_LEASE_MS, type IndexPhaseVersion, type UpgradeOptions, type UpgradeResult } from "./IndexUpgrade.js"
export * from "./IndexedFamily.js"
export { IndexRegistry } from "./IndexRegistry.js"
export { coreIndexedFamilies } from "./IndexCoreFamilies.js"
export * from "./IndexDocumentFamily.js"
export type { IndexContext } from "./IndexFinding.js"
export type { RepairTally } from "./IndexRepair.js"
export * from "./SfcCorrelations.js"
export * from "./SfcRecipes.js"
export { canonicalJson, canonicalRecipeDigest } from "./CanonicalJson.js"
export * from "./SfcHeartbeat.js"
export { DedupeEntries, type DedupeEntry, DedupeState } from "./DedupeEntries.js"
export * from "./ScopeSizes.js"
export * from "./ScopeFigures.js"
export * from "./ScopeStreams.js"
export type { StreamGroup } from "./StreamGroups.js"
export * from "./StreamSummary.js"
export * from "./IndexScores.js"
export * from "./ConsumerHeartbeats.js"
export * from "./Nudges.js"
export * from "./JobOrderRetention.js"
export * from "./LeaseOverview.js"
export * from "./StoreHealth.js"
export * from "./StoreLayer.js"
export { typedCommand, typedPipeline } from "./TypeGuard.js"
// Typed reads of keys by name (SCAN, hashes, sorted sets, values as text or bytes, whole contents).
export * as KeyReads from "./KeyReads.js"
export * from "./ExecutionLogStore.js"
export * from "./ExecutionLogRecord.js"
// Triggers: the rows, their validation and the one-hash store.
export * from "./TriggerRow.js"
export * from "./TriggerStore.js"
export * from "./TriggerEdit.js"
// Job order search over the index the write scripts keep (filters, totals, cursor paging).
export * from "./JobOrderSearch.js"
