import { Context, Effect, Layer, Metric } from "effect"
import { testValkey } from "@microdcs/testkit"
import { ExecutionLogStore, Valkey, ValkeyStreams } from "@microdcs/store"
import { startScoped } from "@microdcs/test-utils"
import {
  embeddedPostgres,
  type EmbeddedPostgres,
  LogStorage,
  logStorageLayer,
  makeStorageRole,
  STORAGE_GROUP,
  storageDatabase,
  type StorageRoleOptions
} from "@microdcs/execution-log"

/** Shared pieces of the execution log tests (not a test file itself). */

export { until } from "@microdcs/test-utils"

/** The embedded PostgreSQL of this test file, for its URL (the killed child connects to it). */
export class TestPg extends Context.Service<TestPg, EmbeddedPostgres>()("test/TestPg") {}

/** One embedded PGlite, the store's log service and the SQL table over the run's Valkey with `prefix`. */
export const logWorld = (prefix: string) => {
  const pg = Layer.effect(TestPg, embeddedPostgres())
  const sql = Layer.unwrap(Effect.map(TestPg, (p) => storageDatabase(p.url)))
  return Layer.mergeAll(ExecutionLogStore.Default, ValkeyStreams.Default).pipe(
    Layer.provideMerge(testValkey({ prefix })),
    Layer.merge(logStorageLayer.pipe(Layer.provideMerge(sql))),
    Layer.provideMerge(pg)
  )
}

/** Quick settings so a test does not wait for the defaults' intervals. */
export const quick: StorageRoleOptions = { consumer: "storage-1", fallbackIntervalMs: 100, claimIdleMs: 60_000, backoff: { initialMs: 20, maxMs: 100 } }

/** Starts the storage role in a scope of its own (stop it to simulate a shutdown). */
export const startRole = (options: StorageRoleOptions = quick) => startScoped(makeStorageRole(options))

export { sampleExecution as execution, sampleNode as node, writeExecution } from "@microdcs/execution-log/testing"

/** The rows stored under the keys, as `key → bytes`. */
export const storedBytes = (keys: ReadonlyArray<string>) =>
  Effect.flatMap(LogStorage, (s) => s.readKeys(keys)).pipe(Effect.map((rows) => new Map(rows.map((r) => [r.key, Buffer.from(r.value)]))))

/** The bytes in Valkey under the keys. */
export const valkeyBytes = (keys: ReadonlyArray<string>) => Effect.flatMap(ExecutionLogStore, (s) => s.readValues(keys))

/** A counter's count (these tests run one after the other in one process: deltas are theirs). */
export const countOf = (counter: Metric.Metric<number, Metric.CounterState<number>>) => Effect.map(Metric.value(counter), (state) => state.count)

/** Pending commit requests of the storage group in a scope. */
export const pendingIn = (scope: string) =>
  Effect.gen(function* () {
    const stream = yield* Effect.flatMap(Valkey, (v) => v.key("executionLogCommits", { scope }))
    return (yield* Effect.flatMap(ValkeyStreams, (s) => s.pending(stream, STORAGE_GROUP))).count
  })
