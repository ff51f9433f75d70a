import { SqlError } from "effect/sql"
import { Context, Effect, Layer, Metric, Option } from "effect"
import { makePoller, type Poller, type PollerEntry, type PollerSettings } from "@microdcs/poller"
import { EXECUTION_LOG_COMMIT_KIND, ExecutionLogStore, type ValkeyStreams, type Valkey } from "@microdcs/store"
import { judgeCommit } from "./CommitRequest.js"
import { describeSqlFailure, type OutageBackoff, waitOutOutage } from "./DatabaseOutage.js"
import { LogStorage, type StoredValue } from "./LogStorage.js"
import { makeStorageAvailability, StorageAvailability } from "./StorageAvailability.js"

/** The consumer group of the storage role on `dag:commits:{scope}`. */
export const STORAGE_GROUP = "storage"

/** Commit requests refused (a key outside `{prefix}:dag:log:`, or no readable key list); attribute `reason`. */
export const refusedCounter = Metric.counter("microdcs_execution_log_refused_total", {
  description: "Execution log commit requests refused: nothing of them written"
})

/** Rows upserted into PostgreSQL (a key committed twice counts twice). */
export const committedCounter = Metric.counter("microdcs_execution_log_committed_total", {
  description: "Execution log values copied into storage"
})

/** Keys of accepted requests that were gone from Valkey when read (retention came first): nothing to copy. */
export const missingCounter = Metric.counter("microdcs_execution_log_missing_total", {
  description: "Execution log keys committed but no longer in Valkey"
})

/**
 * The poller settings of the role (kind, stream and group are fixed), and the back-off between
 * tries while PostgreSQL is away (`outageBackoff`: 100 ms doubling up to 2 s).
 */
export type StorageRoleOptions = Omit<PollerSettings, "kind" | "stream" | "group"> & { readonly outageBackoff?: OutageBackoff | undefined }

/**
 * Handles one batch of commit requests: refuses the requests with a foreign key (counted and
 * logged with the key, nothing of them written), reads the bytes of every accepted key from
 * Valkey in one go and upserts them into PostgreSQL. While PostgreSQL is away (down, restarting,
 * not started yet) the batch waits for it, trying again with a bounded back-off: an outage is no
 * fault of the requests, so it spends none of their delivery attempts. Any other failure fails the
 * batch, which the poller delivers again (and dead-letters after its attempts): a second commit is
 * a rewrite of the same rows.
 */
export const commitBatch = (entries: ReadonlyArray<PollerEntry>, outageBackoff: OutageBackoff = {}) =>
  Effect.gen(function* () {
    const store = yield* ExecutionLogStore
    const storage = yield* LogStorage
    const keys = new Set<string>()
    for (const entry of entries) {
      const judged = judgeCommit(entry.fields, store.parseKey)
      if (judged._tag === "Accepted") {
        for (const key of judged.keys) keys.add(key)
        continue
      }
      yield* Metric.update(Metric.withAttributes(refusedCounter, { reason: judged.reason }), 1)
      yield* Effect.logWarning(`execution log commit refused: ${judged.message}`).pipe(
        Effect.annotateLogs({ scope: entry.scope, entry: entry.id, key: judged.key ?? "" })
      )
    }
    if (keys.size === 0) return
    const wanted = [...keys]
    const values = yield* store.readValues(wanted)
    const rows: Array<StoredValue> = []
    for (const [i, key] of wanted.entries()) {
      const value = values[i]
      if (value !== undefined) rows.push({ key, value })
    }
    if (rows.length < wanted.length) yield* Metric.update(missingCounter, wanted.length - rows.length)
    yield* waitOutOutage(storage.upsert(rows), outageBackoff).pipe(
      // The dead letter's error then says what the database refused (the SqlError's own message does not):
      // the driver's error stays the cause; only the text is read past here, not the reason's kind.
      Effect.mapError((error) => {
        const { cause, operation } = error.reason
        return new SqlError.SqlError({ reason: new SqlError.UnknownError({ cause, message: describeSqlFailure(error), operation }) })
      })
    )
    yield* Metric.update(committedCounter, rows.length)
  })

/** The running storage role: its poller (stats, scopes). */
export class StorageRole extends Context.Service<StorageRole, Poller>()("@microdcs/execution-log/StorageRole") {}

/**
 * The storage role, scoped: consumes `dag:commits:{scope}` of every scope
 * with the consumer group `storage` and commits the named keys' bytes into PostgreSQL.
 */
export const makeStorageRole = ({ outageBackoff, ...options }: StorageRoleOptions = {}) =>
  Effect.gen(function* () {
    const store = yield* ExecutionLogStore
    const storage = yield* LogStorage
    // The daemon's, shared with readiness; else one of the role's own, for the log.
    const shared = yield* Effect.serviceOption(StorageAvailability)
    const availability = Option.isSome(shared) ? shared.value : yield* makeStorageAvailability()
    return yield* makePoller({
      ...options,
      kind: EXECUTION_LOG_COMMIT_KIND,
      stream: "executionLogCommits",
      group: STORAGE_GROUP,
      handleBatch: (entries) =>
        commitBatch(entries, outageBackoff).pipe(
          Effect.provideService(ExecutionLogStore, store),
          Effect.provideService(LogStorage, storage),
          Effect.provideService(StorageAvailability, availability)
        )
    })
  })

/**
 * The storage role as a layer the daemon adds: needs `Valkey`, `ValkeyStreams` and `LogStorage`
 * (`logStorageLayer` over `storageDatabase(url)`). Closing it shuts the poller down.
 */
export const storageRoleLayer = (
  options: StorageRoleOptions = {}
): Layer.Layer<StorageRole, Effect.Error<ReturnType<typeof makeStorageRole>>, Valkey | ValkeyStreams | LogStorage> =>
  Layer.effect(StorageRole, makeStorageRole(options)).pipe(Layer.provide(ExecutionLogStore.Default))
