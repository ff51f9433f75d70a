import { Effect } from "effect"
import { ExecutionLogStore } from "@microdcs/store"
import { encodeExecution, encodeNode, type ExecutionRecord, type NodeRecord } from "./LogRecord.js"

export { crashEmbeddedPostgresForTest } from "./EmbeddedPostgres.js"

/**
 * Test seams of the execution log: records to write, and a writer that puts them in Valkey as the
 * engine does (one call of `ExecutionLogStore.write`). For tests of the storage role, the CLI and
 * the HTTP tree, and a hook that makes the embedded PostgreSQL's thread die as a fault would; not
 * part of the package's runtime API.
 */

/** A closed-or-open execution record; `more` overrides any field. */
export const sampleExecution = (executionId: string, lastSeq: number, more: Partial<ExecutionRecord> = {}): ExecutionRecord => ({
  v: 1,
  executionId,
  jobId: "job-1",
  scope: "line-1",
  workMasterId: "wm-axle",
  recipeDigest: "a".repeat(64),
  openedAt: 1_700_000_000_000,
  status: "completed",
  lastSeq,
  ...more
})

/** A closed step node at `seq` (opened at seq ms after the epoch base, closed 1 ms later); `more` overrides any field. */
export const sampleNode = (seq: number, more: Partial<NodeRecord> = {}): NodeRecord => ({
  v: 1,
  seq,
  kind: "step",
  name: `step-${seq}`,
  openedAt: 1_700_000_000_000 + seq,
  closedAt: 1_700_000_000_000 + seq + 1,
  ...more
})

/** The log values of an execution and its nodes as the engine writes them, record first. */
export const logValues = (record: ExecutionRecord, nodes: ReadonlyArray<NodeRecord>) =>
  Effect.gen(function* () {
    const store = yield* ExecutionLogStore
    const values = [{ key: yield* store.execKey(record.executionId), value: encodeExecution(record) }]
    for (const n of nodes) values.push({ key: yield* store.nodeKey(record.executionId, n.seq), value: encodeNode(n) })
    return values
  })

/** Writes an execution and its nodes to Valkey as the engine does; returns every key written, record first. */
export const writeExecution = (record: ExecutionRecord, nodes: ReadonlyArray<NodeRecord>) =>
  Effect.gen(function* () {
    const values = yield* logValues(record, nodes)
    yield* Effect.flatMap(ExecutionLogStore, (store) => store.write(values, [{ executionId: record.executionId, openedAt: record.openedAt }]))
    return values.map((v) => v.key)
  })
