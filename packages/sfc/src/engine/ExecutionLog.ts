/**
 * The execution log as the pure core sees it: the ids and sequence numbers
 * it keeps in the execution state, and the writes it returns. The runtime encodes the writes
 * (`@microdcs/store`'s log record format) and writes them off the critical path.
 */

/** What a node is about; `skip-step`, `force-transition`, `set-result` and `retry` are an operator's interventions. */
export type LogNodeKind =
  | "step" | "action" | "event" | "transition" | "timeout" | "pause" | "resume" | "stop" | "retry" | "error" | "branch"
  | "skip-step" | "force-transition" | "set-result"

/** How an execution of the log ended, or that it runs. */
export type LogExecutionStatus = "running" | "completed" | "failed" | "aborted" | "stopped"

/** An open execution of the log: the job's own one, or a running path of a simultaneous branch. */
export interface LogExecution {
  readonly executionId: string
  readonly openedAt: number
  /** The highest sequence number given to a node of it (-1 before the first). */
  readonly lastSeq: number
  /** The branch node that created this child execution; absent for the job's own execution. */
  readonly parent?: { readonly executionId: string; readonly seq: number }
}

/** What the state keeps of its log: the execution id chosen at start and the open executions. */
export interface ExecutionLogState {
  /** The execution of the job, chosen by the runtime when it started (never the job id alone). */
  readonly executionId: string
  /** Open executions, the job's own first while it runs; a child leaves when its path ends. */
  readonly open: ReadonlyArray<LogExecution>
  /** Entries per simultaneous branch, for the visit part of child execution ids. */
  readonly branchVisits?: Readonly<Record<string, number>>
}

/** One node as the core writes it (the store's `NodeRecord` without the version). */
export interface LogNode {
  readonly seq: number
  readonly kind: LogNodeKind
  readonly name: string
  readonly visit?: number
  readonly openedAt: number
  /** Absent while open. */
  readonly closedAt?: number
  /** A branch node: the ids of the child executions it started. */
  readonly children?: ReadonlyArray<string>
  /** Result, reply or error; the runtime bounds its size. */
  readonly detail?: unknown
}

/** One execution record as the core writes it (the store's `ExecutionRecord` without the version). */
export interface LogExecutionRecord {
  readonly executionId: string
  readonly jobId: string
  readonly scope: string
  readonly workMasterId: string
  readonly recipeDigest: string
  readonly parent?: { readonly executionId: string; readonly seq: number }
  readonly openedAt: number
  readonly closedAt?: number
  readonly status: LogExecutionStatus
  readonly lastSeq: number
}

/**
 * A write of the log: a node (opened, or overwritten closed under the same key), or an
 * execution record (`opened` on its first write, when it joins the list of executions).
 */
export type LogWrite =
  | { readonly type: "node"; readonly executionId: string; readonly node: LogNode }
  | { readonly type: "exec"; readonly opened: boolean; readonly record: LogExecutionRecord }

/** The highest sequence number a node key holds (six digits, keyschema's `nodeSeqPart`). */
export const MAX_LOG_SEQ = 999_999

/** The id of a branch path's child execution. */
export const childExecutionId = (executionId: string, branch: string, path: number, visit: number): string =>
  `${executionId}.${branch}.${path}.${visit}`
