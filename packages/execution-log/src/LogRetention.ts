import { Effect, Either, Option } from "effect"
import { ExecutionLogStore } from "@microdcs/store"
import { decodeExecution } from "./LogRecord.js"

/** The default cap on executions kept in Valkey (execution-log.md §1). */
export const DEFAULT_EXECUTION_CAP = 5000

/**
 * Removes from Valkey the oldest executions beyond the newest `cap` (by open time): their
 * record and nodes. The log in Valkey is for diagnosis; storage keeps what was committed, and
 * `executionTree` reads it from there. Returns the ids removed, oldest first. An execution whose
 * record is unreadable loses only its record and place in the list (its nodes cannot be counted).
 */
export const retainExecutions = (cap: number = DEFAULT_EXECUTION_CAP) =>
  Effect.gen(function* () {
    const store = yield* ExecutionLogStore
    const ids = yield* store.oldestBeyond(cap)
    const extents = yield* Effect.forEach(ids, (executionId) =>
      Effect.gen(function* () {
        const exec = yield* store.readExec(executionId)
        if (Option.isNone(exec)) return { executionId, lastSeq: -1 }
        const record = decodeExecution(yield* store.execKey(executionId), exec.value)
        return { executionId, lastSeq: Either.isRight(record) ? record.right.lastSeq : -1 }
      })
    )
    yield* store.remove(extents)
    return ids
  })
