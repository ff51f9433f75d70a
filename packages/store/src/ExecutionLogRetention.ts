import { Effect, Result } from "effect"
import { KeyPartError, type KeySchema, MAX_NODE_SEQ, nodeSeqPart } from "@microdcs/keyschema"
import { type ConnectionError, InvalidInput, type WrongType } from "./Errors.js"
import { decodeExecution } from "./ExecutionLogRecord.js"
import { CHUNK, chunks, keyPartInvalid } from "./ExecutionLogKeyShape.js"
import { command } from "./RawDoor.js"
import { typedCommand } from "./TypeGuard.js"
import type { ValkeyService } from "./Valkey.js"

/** An execution to remove from Valkey (retention): its id and its last sequence number. */
export interface ExecutionExtent {
  readonly executionId: string
  readonly lastSeq: number
}

/** What retention works with: the store's connection (and its key schema) and the key of `dag:log:executions`. */
export interface RetentionDeps {
  readonly valkey: ValkeyService
  readonly executionsKey: string
}

/** The keys of executions: each one's record and nodes `0..lastSeq`, built from plain code (thousands per retention). */
const keysOfExtents = (schema: KeySchema, executions: ReadonlyArray<ExecutionExtent>): Effect.Effect<ReadonlyArray<string>, InvalidInput> =>
  Effect.suspend(() => {
    const keys: Array<string> = []
    for (const { executionId, lastSeq } of executions) {
      const exec = schema.key("executionLogExec", { executionId })
      if (exec instanceof KeyPartError) return Effect.fail(keyPartInvalid(exec))
      keys.push(exec)
      for (let seq = 0; seq <= Math.min(lastSeq, MAX_NODE_SEQ); seq++) {
        const node = schema.key("executionLogNode", { executionId, seq: nodeSeqPart(seq) as string })
        if (node instanceof KeyPartError) return Effect.fail(keyPartInvalid(node))
        keys.push(node)
      }
    }
    return Effect.succeed(keys)
  })

/** A page of `dag:log:executions` by rank, oldest first. */
interface Page {
  readonly start: number
  readonly size: number
}

/**
 * Removes executions (record, nodes `0..lastSeq`, place in the list: the record before the place,
 * so an interrupted removal leaves a place without record, never a record outside the list) and
 * reads `next` page of the list after them, in one pipelined round trip (an UNLINK per 1000 keys,
 * a ZREM per 1000 ids). Returns the ids of that page (none without one).
 */
export const removeThenRead = (deps: RetentionDeps, executions: ReadonlyArray<ExecutionExtent>, next?: Page) =>
  Effect.gen(function* () {
    if (executions.length === 0 && next === undefined) return []
    const keys = yield* keysOfExtents(deps.valkey.keys, executions)
    return yield* command(deps.valkey, "remove executions", async (c) => {
      const pipeline = c.pipeline()
      for (const part of chunks(keys)) pipeline.unlink(...part)
      for (const part of chunks(executions)) pipeline.zrem(deps.executionsKey, ...part.map((e) => e.executionId))
      if (next !== undefined) pipeline.zrange(deps.executionsKey, next.start, next.start + next.size - 1)
      const replies = (await pipeline.exec()) ?? []
      for (const [error] of replies) if (error) throw error
      return next === undefined ? [] : (replies.at(-1)?.[1] as ReadonlyArray<string>)
    })
  })

/**
 * What retention does with a stored record: `undefined` while it runs (kept), else the extent to
 * remove; a record that is gone or does not decode (or is of another type) loses only itself and
 * its place (its nodes cannot be counted).
 */
const extentOf = (executionId: string, key: string, bytes: Buffer | null): ExecutionExtent | undefined => {
  if (bytes === null) return { executionId, lastSeq: -1 }
  const record = decodeExecution(key, bytes)
  if (Result.isFailure(record)) return { executionId, lastSeq: -1 }
  return record.success.status === "running" ? undefined : { executionId, lastSeq: record.success.lastSeq }
}

/** Of a page's executions (their records in one MGET): those to remove, oldest first and at most `limit`, and how many run. */
const sortPage = (deps: RetentionDeps, ids: ReadonlyArray<string>, limit: number) =>
  Effect.gen(function* () {
    const keys = yield* Effect.forEach(ids, (executionId) => deps.valkey.key("executionLogExec", { executionId }))
    const records = yield* command(deps.valkey, "read executions", (c) => c.mgetBuffer(...keys))
    const closed: Array<ExecutionExtent> = []
    let running = 0
    for (let i = 0; i < ids.length && closed.length < limit; i++) {
      const extent = extentOf(ids[i]!, keys[i]!, records[i] ?? null)
      if (extent === undefined) running++
      else closed.push(extent)
    }
    return { closed, running }
  })

/**
 * Retention: removes the oldest closed executions until `cap` are left; a running one is never
 * removed, so while more than `cap` run, every running one stays (and no closed one). Pages of the
 * list, oldest first: each page's records in one MGET, then its removal and the next page's ids
 * in one round trip. A page asks for what is left to remove plus the running ones passed so far
 * (at most 1000): the usual run reads just the oldest few, and a run crowded with running
 * executions reads them in pages of 1000, never one at a time. Returns the ids removed.
 */
export const retain = (deps: RetentionDeps, cap: number): Effect.Effect<ReadonlyArray<string>, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    if (!Number.isSafeInteger(cap) || cap < 0) return yield* new InvalidInput({ field: "cap", message: `cap ${cap} is not a whole number >= 0` })
    const count = yield* typedCommand(deps.valkey, "count executions", deps.executionsKey, "zset", (c) => c.zcard(deps.executionsKey))
    const excess = count - cap
    if (excess <= 0) return []
    const removed: Array<string> = []
    // Running ones passed stay at the head of the list: the next page starts after them.
    let passed = 0
    let page: Page | undefined = { start: 0, size: Math.min(CHUNK, excess) }
    let ids = yield* removeThenRead(deps, [], page)
    while (page !== undefined && ids.length > 0) {
      const { closed, running } = yield* sortPage(deps, ids, excess - removed.length)
      removed.push(...closed.map((e) => e.executionId))
      passed += running
      const more: boolean = removed.length < excess && ids.length === page.size && passed + removed.length < count
      page = more ? { start: passed, size: Math.min(CHUNK, excess - removed.length + passed) } : undefined
      ids = yield* removeThenRead(deps, closed, page)
    }
    return removed
  })
