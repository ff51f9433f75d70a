import { SqlClient } from "effect/sql"
import { Array as Arr, Effect, Layer, Metric } from "effect"
import { ExecutionLogStore, ValkeyLayer, ValkeyStreams } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import {
  committedCounter,
  encodeExecution,
  encodeNode,
  LOG_TABLE,
  logStorageLayer,
  makeStorageRole,
  prefixUpperBound,
  ROWS_PER_STATEMENT,
  startEmbeddedPostgres,
  storageDatabase
} from "@microdcs/execution-log"

/** Executions and nodes per execution of one run (one commit request per execution, as the engine will send). */
const EXECUTIONS = Number(process.env["BENCH_LOG_EXECUTIONS"] ?? 200)
const NODES = Number(process.env["BENCH_LOG_NODES"] ?? 50)
/** A node value of realistic size (~400 bytes of JSON: a step visit with a small result). */
const DETAIL = { result: "ok", values: Array.from({ length: 20 }, (_, i) => ({ name: `v${i}`, value: i * 1.5 })) }

const RAW_TABLE = "execution_log_bench_raw"

/** Writes the log to Valkey (not measured); returns each execution's keys and every value. */
const writeLog = (runId: string) =>
  Effect.gen(function* () {
    const store = yield* ExecutionLogStore
    const requests: Array<ReadonlyArray<string>> = []
    const values: Array<{ key: string; value: Uint8Array }> = []
    for (let e = 0; e < EXECUTIONS; e++) {
      const executionId = `${runId}.e${e}`
      const batch = [
        {
          key: yield* store.execKey(executionId),
          value: encodeExecution({
            v: 1, executionId, jobId: `job-${e}`, scope: "bench", workMasterId: "wm", recipeDigest: "a".repeat(64),
            openedAt: Date.now(), closedAt: Date.now(), status: "completed", lastSeq: NODES - 1
          })
        }
      ]
      for (let seq = 0; seq < NODES; seq++) {
        batch.push({
          key: yield* store.nodeKey(executionId, seq),
          value: encodeNode({ v: 1, seq, kind: "step", name: `step-${seq}`, openedAt: Date.now(), closedAt: Date.now(), detail: DETAIL })
        })
      }
      yield* store.write(batch)
      requests.push(batch.map((v) => v.key))
      values.push(...batch)
    }
    return { requests, values }
  })

/** Rows/s of the baseline: the same bytes in multi-row INSERTs of the role's statement size, through the same client. */
const rawInsert = (values: ReadonlyArray<{ key: string; value: Uint8Array }>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`create table if not exists ${sql(RAW_TABLE)} (key text collate "C" primary key, value bytea not null, committed_at timestamptz not null default now())`
    yield* sql`truncate ${sql(RAW_TABLE)}`
    const t0 = performance.now()
    for (let i = 0; i < values.length; i += ROWS_PER_STATEMENT) {
      const rows = values.slice(i, i + ROWS_PER_STATEMENT).map((v) => ({ key: v.key, value: v.value }))
      if (Arr.isArrayNonEmpty(rows)) yield* sql`insert into ${sql(RAW_TABLE)} ${sql.insert(rows)}`
    }
    return values.length / ((performance.now() - t0) / 1000)
  })

/**
 * Rows/s through the storage role. `backlog`: every request is in the stream before the role
 * starts, so it reads full batches (a role catching up after a restart). `live`: the role runs
 * while the requests arrive one by one, as executions close, and reads what each nudge finds.
 */
const throughRole = (requests: ReadonlyArray<ReadonlyArray<string>>, rows: number, mode: "backlog" | "live") =>
  Effect.gen(function* () {
    const store = yield* ExecutionLogStore
    const start = makeStorageRole({ consumer: `bench-${mode}`, fallbackIntervalMs: 200 })
    const before = (yield* Metric.value(committedCounter)).count
    const t0 = performance.now()
    if (mode === "live") yield* start
    for (const keys of requests) yield* store.commit(mode, keys)
    if (mode === "backlog") yield* start
    while ((yield* Metric.value(committedCounter)).count - before < rows) yield* Effect.sleep("5 millis")
    return rows / ((performance.now() - t0) / 1000)
  }).pipe(Effect.scoped)

/**
 * Commit throughput of the execution log: nodes/s copied from Valkey into
 * PostgreSQL by the storage role, next to a plain multi-row INSERT of the same bytes through the
 * same client. Against BENCH_PG_URL, or the embedded PGlite over the wire protocol.
 */
export const runExecutionLogBench = async (url: string): Promise<void> => {
  const external = process.env["BENCH_PG_URL"]
  const pg = external ? undefined : await startEmbeddedPostgres()
  const pgUrl = external ?? pg!.url
  const layer = Layer.mergeAll(ExecutionLogStore.Default, ValkeyStreams.Default).pipe(
    Layer.provideMerge(ValkeyLayer.layer({ url, prefix: randomPrefix("bench-log") })),
    Layer.merge(logStorageLayer.pipe(Layer.provideMerge(storageDatabase(pgUrl))))
  )
  try {
    const rows = EXECUTIONS * (NODES + 1)
    const [raw, backlog, live] = await Effect.runPromise(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const first = yield* writeLog(randomPrefix("run"))
        const raw = yield* rawInsert(first.values)
        const backlog = yield* throughRole(first.requests, rows, "backlog")
        const second = yield* writeLog(randomPrefix("run"))
        const live = yield* throughRole(second.requests, rows, "live")
        yield* sql`drop table ${sql(RAW_TABLE)}`
        const ours = (yield* ExecutionLogStore).logPrefix
        yield* sql`delete from ${sql(LOG_TABLE)} where key >= ${ours} and key < ${prefixUpperBound(ours)!}`
        return [raw, backlog, live] as const
      }).pipe(Effect.provide(layer))
    )
    console.log(`\nexecution log commit (${EXECUTIONS} executions × ${NODES + 1} values, ${external ? "PostgreSQL at BENCH_PG_URL" : "embedded PGlite"})`)
    console.log(`  ${"plain multi-row INSERT, same bytes, same client".padEnd(52)} ${raw.toFixed(0).padStart(10)} rows/s`)
    for (const [label, figure] of [
      ["storage role, a backlog of requests (full batches)", backlog],
      ["storage role, requests arriving one by one", live]
    ] as const) {
      console.log(`  ${label.padEnd(52)} ${figure.toFixed(0).padStart(10)} rows/s ${`${((figure / raw) * 100).toFixed(0)}%`.padStart(6)} of raw`)
    }
  } finally {
    await pg?.stop()
  }
}
