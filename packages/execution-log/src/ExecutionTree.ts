import { Data, Effect, Result, Option } from "effect"
import type { SqlError } from "effect/sql"
import { type ConnectionError, ExecutionLogStore, type InvalidInput, type WrongType } from "@microdcs/store"
import { decodeExecution, decodeNode, type ExecutionRecord, type LogRecordInvalid, type NodeRecord } from "./LogRecord.js"
import { LogStorage, type LogStorageService } from "./LogStorage.js"

/**
 * One row of an execution tree. An execution's row is at its depth, its nodes one deeper, and the
 * child executions of a delegating node right after that node, one deeper again: a client draws
 * the tree by indenting each row by its `depth` and nothing else.
 */
export type TreeRow =
  | { readonly type: "execution"; readonly depth: number; readonly executionId: string; readonly record: ExecutionRecord }
  | { readonly type: "node"; readonly depth: number; readonly executionId: string; readonly record: NodeRecord }
  /** A child a delegating node names that is neither in Valkey nor in storage (not written yet, or lost under pressure). */
  | { readonly type: "missing"; readonly depth: number; readonly executionId: string }

/** The execution asked for is neither in Valkey nor in storage. */
export class ExecutionNotFound extends Data.TaggedError("ExecutionNotFound")<{
  readonly executionId: string
}> {
  override get message() {
    return `execution ${this.executionId} is neither in Valkey nor in storage`
  }
}

/** What reading a tree can fail with. */
export type ExecutionTreeError = ExecutionNotFound | LogRecordInvalid | InvalidInput | WrongType | ConnectionError | SqlError.SqlError

interface LoadedExecution {
  readonly record: ExecutionRecord
  readonly nodes: ReadonlyArray<NodeRecord>
}

const decoded = <A>(result: Result.Result<A, LogRecordInvalid>) => (Result.isSuccess(result) ? Effect.succeed(result.success) : Effect.fail(result.failure))

/** What a tree's reads share: the log in Valkey and its storage. */
interface TreeDeps {
  readonly store: ExecutionLogStore["Service"]
  readonly storage: LogStorageService
}

const fromValkey = ({ store }: TreeDeps, id: string) =>
  Effect.gen(function* () {
    const exec = yield* store.readExec(id)
    if (Option.isNone(exec)) return Option.none<LoadedExecution>()
    const execKey = yield* store.execKey(id)
    const record = yield* decoded(decodeExecution(execKey, exec.value))
    const found = yield* store.readNodes(id, 0, record.lastSeq)
    const nodes = yield* Effect.forEach(found, (n) => decoded(decodeNode(n.key, n.value)))
    return Option.some<LoadedExecution>({ record, nodes })
  })

const fromStorage = ({ store, storage }: TreeDeps, id: string) =>
  Effect.gen(function* () {
    const rows = yield* storage.readPrefix(yield* store.executionKeyPrefix(id))
    let record: ExecutionRecord | undefined
    const nodes: Array<NodeRecord> = []
    for (const row of rows) {
      const key = store.parseKey(row.key)
      // The range of `id` holds only its own keys: an id's encoding ends at the ':' before `exec` or `n`.
      if (key === undefined || key.executionId !== id) continue
      if (key.kind === "exec") record = yield* decoded(decodeExecution(row.key, row.value))
      else nodes.push(yield* decoded(decodeNode(row.key, row.value)))
    }
    return record === undefined ? Option.none<LoadedExecution>() : Option.some<LoadedExecution>({ record, nodes })
  })

const load = (deps: TreeDeps, id: string) => Effect.flatMap(fromValkey(deps, id), (found) => (Option.isSome(found) ? Effect.succeed(found) : fromStorage(deps, id)))

/** One tree's walk: the rows so far and the executions already shown. */
interface TreeWalk {
  readonly deps: TreeDeps
  readonly rows: Array<TreeRow>
  // An execution appears once even if two nodes named it (a cycle would be a bug of the writer).
  readonly seen: Set<string>
}

const walk = (w: TreeWalk, id: string, depth: number): Effect.Effect<void, ExecutionTreeError> =>
  Effect.gen(function* () {
    if (w.seen.has(id)) return
    w.seen.add(id)
    const found = yield* load(w.deps, id)
    if (Option.isNone(found)) {
      if (depth === 0) return yield* new ExecutionNotFound({ executionId: id })
      w.rows.push({ type: "missing", depth, executionId: id })
      return
    }
    w.rows.push({ type: "execution", depth, executionId: id, record: found.value.record })
    for (const node of found.value.nodes) {
      w.rows.push({ type: "node", depth: depth + 1, executionId: id, record: node })
      for (const child of node.children ?? []) yield* walk(w, child, depth + 2)
    }
  })

/**
 * `executionTree(executionId)`: the execution, its nodes and, through each delegating node's
 * child ids, its child executions, depth first, as one flat list of rows. Each execution is read
 * from Valkey first and from storage (PostgreSQL) when retention removed it from Valkey.
 */
export const executionTree = (executionId: string): Effect.Effect<ReadonlyArray<TreeRow>, ExecutionTreeError, ExecutionLogStore | LogStorage> =>
  Effect.gen(function* () {
    const w: TreeWalk = { deps: { store: yield* ExecutionLogStore, storage: yield* LogStorage }, rows: [], seen: new Set() }
    yield* walk(w, executionId, 0)
    return w.rows
  })
