import type { SqlError } from "effect/sql"
import { Context, Data, Effect, Result, Layer, Option } from "effect"
import { ExecutionLogStore } from "@microdcs/store"
import { ExecutionNotFound, executionTree, type ExecutionTreeError, type TreeRow } from "./ExecutionTree.js"
import { decodeExecution, type ExecutionRecord } from "./LogRecord.js"
import { LogStorage, type LogStorageService } from "./LogStorage.js"

/** Neither an execution nor a job of that id is in the log (Valkey or storage). */
export class NoExecutionLog extends Data.TaggedError("NoExecutionLog")<{
  readonly id: string
  /** Whether storage was searched too (false: Valkey only, no database configured). */
  readonly searchedStorage: boolean
}> {
  override get message() {
    return `no execution or job ${this.id} in the execution log${this.searchedStorage ? "" : " (Valkey only: no storage database configured)"}`
  }
}

/** The trees an operator asked for: one execution's, or those of every execution of a job, oldest first. */
export interface OperatorTree {
  readonly id: string
  /** `execution` when `id` names one, `job` when it named a job whose top-level executions are shown. */
  readonly resolvedAs: "execution" | "job"
  readonly executions: ReadonlyArray<string>
  /** Each execution's tree after the other, each starting at depth 0. */
  readonly rows: ReadonlyArray<TreeRow>
}

export interface ExecutionLookupService {
  /** Whether reads fall back to storage (a database is configured) or stay in Valkey. */
  readonly searchesStorage: boolean
  /** The top-level executions of a job in Valkey and storage, oldest first. */
  readonly executionsOfJob: (jobId: string) => Effect.Effect<ReadonlyArray<ExecutionRecord>, ExecutionTreeError>
  /** `execution tree JOB|EXECUTION`: the execution's tree, else the trees of the job's executions. */
  readonly tree: (id: string) => Effect.Effect<OperatorTree, NoExecutionLog | ExecutionTreeError>
}

/** Resolves an operator's id (an execution or a job) to execution trees. */
export class ExecutionLookup extends Context.Service<ExecutionLookup, ExecutionLookupService>()("@microdcs/execution-log/ExecutionLookup") {}

const decoded = (key: string, bytes: Uint8Array) => Result.getOrUndefined(decodeExecution(key, bytes))

/** What the lookup's functions share: the log's keys and values in Valkey, and its storage. */
interface LookupDeps {
  readonly store: ExecutionLogStore["Service"]
  readonly storage: LogStorageService
}

/** Valkey: every execution id in `dag:log:executions` (bounded by retention), records read in chunks. */
const fromValkey = ({ store }: LookupDeps, jobId: string) =>
  Effect.gen(function* () {
    const ids = yield* store.oldestBeyond(0)
    const keys = yield* Effect.forEach(ids, (id) => store.execKey(id))
    const values = yield* store.readValues(keys)
    return keys.flatMap((key, i) => {
      const bytes = values[i]
      const record = bytes === undefined ? undefined : decoded(key, bytes)
      return record !== undefined && record.jobId === jobId && record.parent === undefined ? [record] : []
    })
  })

/**
 * Storage: the execution records (keys ending in `:exec`) whose bytes contain the job id as the
 * encoder writes it, decoded and checked exactly. The search runs on the bytes, so a garbled
 * value elsewhere in the table cannot fail it.
 */
const fromStorage = ({ store, storage }: LookupDeps, jobId: string): Effect.Effect<ReadonlyArray<ExecutionRecord>, SqlError.SqlError> => {
  const needle = Buffer.from(`"jobId":${JSON.stringify(jobId)}`, "utf8")
  return Effect.map(storage.execRecordsContaining(store.logPrefix, needle), (rows) =>
    rows.flatMap((row) => {
      const parsed = store.parseKey(row.key)
      const record = parsed?.kind === "exec" ? decoded(row.key, row.value) : undefined
      return record !== undefined && record.jobId === jobId && record.parent === undefined ? [record] : []
    })
  )
}

const executionsOfJob = (deps: LookupDeps, jobId: string) =>
  Effect.gen(function* () {
    const byId = new Map<string, ExecutionRecord>()
    // Storage first: Valkey's copy of an execution is the newer one while it is there.
    for (const record of yield* fromStorage(deps, jobId)) byId.set(record.executionId, record)
    for (const record of yield* fromValkey(deps, jobId)) byId.set(record.executionId, record)
    return [...byId.values()].sort((a, b) => a.openedAt - b.openedAt || (a.executionId < b.executionId ? -1 : 1))
  })

const provided = <A, E>({ store, storage }: LookupDeps, effect: Effect.Effect<A, E, ExecutionLogStore | LogStorage>) =>
  effect.pipe(Effect.provideService(ExecutionLogStore, store), Effect.provideService(LogStorage, storage))

/** The tree of the execution `id` names, or none when no execution has that id. */
const ownTree = (deps: LookupDeps, id: string) =>
  provided(deps, executionTree(id)).pipe(
    Effect.map(Option.some),
    Effect.catchIf(
      (e): e is ExecutionNotFound => e instanceof ExecutionNotFound && e.executionId === id,
      () => Effect.succeed(Option.none<ReadonlyArray<TreeRow>>())
    )
  )

const tree = (deps: LookupDeps, id: string): Effect.Effect<OperatorTree, NoExecutionLog | ExecutionTreeError> =>
  Effect.gen(function* () {
    const own = yield* ownTree(deps, id)
    if (Option.isSome(own)) return { id, resolvedAs: "execution", executions: [id], rows: own.value } satisfies OperatorTree
    const executions = yield* executionsOfJob(deps, id)
    if (executions.length === 0) return yield* new NoExecutionLog({ id, searchedStorage: deps.storage.hasDatabase })
    const rows: Array<TreeRow> = []
    for (const e of executions) rows.push(...(yield* provided(deps, executionTree(e.executionId))))
    return { id, resolvedAs: "job", executions: executions.map((e) => e.executionId), rows } satisfies OperatorTree
  })

const makeExecutionLookup = Effect.gen(function* () {
  const deps: LookupDeps = { store: yield* ExecutionLogStore, storage: yield* LogStorage }
  return {
    searchesStorage: deps.storage.hasDatabase,
    executionsOfJob: (jobId: string) => executionsOfJob(deps, jobId),
    tree: (id: string) => tree(deps, id)
  } satisfies ExecutionLookupService
})

/**
 * The lookup over the log in Valkey and `LogStorage`; with a database behind it, it also finds the
 * executions of a job that retention removed from Valkey.
 */
export const executionLookupLayer: Layer.Layer<ExecutionLookup, never, ExecutionLogStore | LogStorage> = Layer.effect(ExecutionLookup, makeExecutionLookup)

/**
 * `LogStorage` without a database: every read finds nothing, so the tree is read from Valkey
 * alone (a reader that has no `PG_URL`, or a daemon without the storage role). Writes are refused
 * as defects: nothing may commit into it.
 */
export const withoutLogStorage: Layer.Layer<LogStorage> = Layer.succeed(LogStorage, {
  hasDatabase: false,
  ensureTable: Effect.void,
  upsert: () => Effect.die(new Error("no execution log storage is configured")),
  readPrefix: () => Effect.succeed([]),
  readKeys: () => Effect.succeed([]),
  execRecordsContaining: () => Effect.succeed([])
})
