import { Effect } from "effect"
import { ExecutionLogStore } from "@microdcs/store"

/** The default cap on executions kept in Valkey. */
export const DEFAULT_EXECUTION_CAP = 5000

/**
 * Removes from Valkey the oldest closed executions (by open time) until `cap` are left: their
 * record and nodes. A running execution is never removed: while more than `cap` run, every running
 * one stays until it closes. The log in Valkey is for diagnosis; storage keeps what was committed, and
 * `executionTree` reads it from there. Returns the ids removed, oldest first. An execution whose
 * record is unreadable loses only its record and place in the list (its nodes cannot be counted).
 * The same as `ExecutionLogStore.retain`, which the engine's log writer calls every 100th open.
 */
export const retainExecutions = (cap: number = DEFAULT_EXECUTION_CAP) => Effect.flatMap(ExecutionLogStore, (store) => store.retain(cap))
