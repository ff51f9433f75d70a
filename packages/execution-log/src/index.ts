// The value encoding of the log (the engine encodes, readers decode; storage copies bytes).
export * from "./LogRecord.js"
// Storage: the table, the database (PG_URL or the embedded PGlite) and the role that commits into it.
export {
  LOG_TABLE,
  LogStorage,
  type LogStorageService,
  logStorageLayer,
  makeLogStorage,
  prefixUpperBound,
  ROWS_PER_STATEMENT,
  type StoredRow,
  type StoredValue
} from "./LogStorage.js"
export {
  type EmbeddedPostgres,
  embeddedPostgres,
  EmbeddedPostgresFailed,
  type EmbeddedPostgresOptions,
  startEmbeddedPostgres
} from "./EmbeddedPostgres.js"
export { pgUrlConfig, storageDatabase, storageDatabaseFromEnv } from "./StorageDatabase.js"
// The database started in the background: the storage is there at once, commits wait for the start.
export { backgroundLogStorage, restartsCounter, type StartFailure, StorageStart } from "./BackgroundStorage.js"
export { type CommitJudgement, judgeCommit, type RefusalReason } from "./CommitRequest.js"
// An outage of the database is waited out, not counted against the requests; its state for readiness.
export { describeSqlFailure, isDatabaseUnavailable, type OutageBackoff, waitOutOutage } from "./DatabaseOutage.js"
export {
  makeStorageAvailability,
  StorageAvailability,
  type StorageAvailabilityService,
  storageAvailabilityLayer,
  type StorageState
} from "./StorageAvailability.js"
export {
  commitBatch,
  committedCounter,
  makeStorageRole,
  missingCounter,
  refusedCounter,
  STORAGE_GROUP,
  StorageRole,
  type StorageRoleOptions,
  storageRoleLayer
} from "./StorageRole.js"
// Reads.
export { ExecutionNotFound, executionTree, type ExecutionTreeError, type TreeRow } from "./ExecutionTree.js"
export { DEFAULT_EXECUTION_CAP, retainExecutions } from "./LogRetention.js"
// For operators (CLI, HTTP): an execution or a job id to its trees; reading without a database.
export {
  ExecutionLookup,
  executionLookupLayer,
  type ExecutionLookupService,
  NoExecutionLog,
  type OperatorTree,
  withoutLogStorage
} from "./ExecutionLookup.js"
