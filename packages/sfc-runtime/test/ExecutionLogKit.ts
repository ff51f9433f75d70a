import { Effect, Layer, Option } from "effect"
import { ExecutionLogStore, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
// A dev dependency only (PostgreSQL stays out of the engine): the tests read the tree the CLI and
// the HTTP API read.
import { executionTree, logStorageLayer, storageDatabase, type TreeRow } from "@microdcs/execution-log"
import { executionOf } from "./RuntimeKit.js"

/** Shared pieces of the execution log tests (not a test file itself). */

export { executionTree, type TreeRow }

/** The storage side of `executionTree`: an embedded PGlite and the log table (the tree reads Valkey first). */
export const treeStorage = logStorageLayer.pipe(Layer.provide(storageDatabase(undefined)))

/** A world's layer with the store's log service beside it, built once. */
export const withLogStore = <A, E, R>(world: Layer.Layer<A, E, R>) => ExecutionLogStore.Default.pipe(Layer.provideMerge(world))

/** The job's execution id, once its state has one. */
export const executionIdOf = (jobId: string) =>
  Effect.map(executionOf(jobId), (e) => e?.state.log?.executionId)

/**
 * The tree as lines a reader checks at a glance: the job's execution is `X`, so a child is
 * `X.{branch}.{path}.{visit}`; a node is `{seq} {kind} {name}[ v{visit}]`, `(open)` while open.
 */
export const treeLines = (rows: ReadonlyArray<TreeRow>): ReadonlyArray<string> => {
  const top = rows[0]?.executionId ?? ""
  const id = (executionId: string) => (executionId === top ? "X" : executionId.startsWith(`${top}.`) ? `X${executionId.slice(top.length)}` : executionId)
  return rows.map((row) => {
    const indent = "  ".repeat(row.depth)
    if (row.type === "missing") return `${indent}missing ${id(row.executionId)}`
    if (row.type === "execution") return `${indent}exec ${id(row.executionId)} ${row.record.status}`
    const n = row.record
    return `${indent}${n.seq} ${n.kind} ${n.name}${n.visit !== undefined ? ` v${n.visit}` : ""}${n.closedAt === undefined ? " (open)" : ""}`
  })
}

/** Every key of one execution in Valkey (its record and nodes). */
export const keysOfExecution = (executionId: string) =>
  Effect.gen(function* () {
    const store = yield* ExecutionLogStore
    const valkey = yield* Valkey
    const prefix = yield* store.executionKeyPrefix(executionId)
    const keys: Array<string> = []
    let cursor = "0"
    do {
      const [next, page] = yield* unsafeCommand(valkey, "scan", (c) => c.scan(cursor, "MATCH", `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`, "COUNT", 1000))
      cursor = next
      keys.push(...page.filter((k) => store.parseKey(k)?.executionId === executionId))
    } while (cursor !== "0")
    return keys.sort()
  })

/** Whether the execution's record is in Valkey. */
export const hasExecutionRecord = (executionId: string) =>
  Effect.flatMap(ExecutionLogStore, (store) => Effect.map(store.readExec(executionId), Option.isSome))
