import {
  type ExecutionLogState,
  type LogExecution,
  type LogExecutionRecord,
  type LogExecutionStatus,
  type LogNode,
  type LogWrite,
  MAX_LOG_SEQ
} from "./ExecutionLog.js"

/** What every execution record of one job repeats. */
export interface LogIdentity {
  readonly jobId: string
  readonly scope: string
  readonly workMasterId: string
  readonly recipeDigest?: string | undefined
}

interface ClosedExecution {
  readonly execution: LogExecution
  readonly status: LogExecutionStatus
  readonly closedAt: number
}

/**
 * The log side of one core call: hands out sequence numbers from the state, collects the node
 * writes (a key written twice in one call is written once, with its last value) and, at the end,
 * the records of the executions whose last sequence number, or status, changed.
 */
export class LogDraft {
  readonly executionId: string
  private readonly open: Map<string, LogExecution>
  private readonly branchVisits: Record<string, number>
  private readonly nodes = new Map<string, LogWrite>()
  private readonly dirty = new Set<string>()
  private readonly opened = new Set<string>()
  private readonly closed = new Map<string, ClosedExecution>()

  private constructor(source: ExecutionLogState) {
    this.executionId = source.executionId
    this.open = new Map(source.open.map((e) => [e.executionId, e]))
    this.branchVisits = { ...source.branchVisits }
  }

  /** The log of a state that has one. */
  static of(source: ExecutionLogState): LogDraft {
    return new LogDraft(source)
  }

  /** A new log: the job's execution opens now (at start, or on the first touch of an older state). */
  static fresh(executionId: string, openedAt: number): LogDraft {
    const draft = new LogDraft({ executionId, open: [{ executionId, openedAt, lastSeq: -1 }] })
    draft.opened.add(executionId)
    draft.dirty.add(executionId)
    return draft
  }

  isOpen(executionId: string): boolean {
    return this.open.has(executionId)
  }

  /** Opens (writes) a node with the execution's next sequence number; undefined when it is not open or full. */
  node(executionId: string, node: Omit<LogNode, "seq">): number | undefined {
    const execution = this.open.get(executionId)
    if (execution === undefined || execution.lastSeq >= MAX_LOG_SEQ) return undefined
    const seq = execution.lastSeq + 1
    this.open.set(executionId, { ...execution, lastSeq: seq })
    this.dirty.add(executionId)
    this.put(executionId, { seq, ...node })
    return seq
  }

  /** Writes a node again under its sequence number (closed, or with a resend counted): an overwrite. */
  put(executionId: string, node: LogNode): void {
    this.nodes.set(`${executionId}\n${node.seq}`, { type: "node", executionId, node })
  }

  /** The next visit of a simultaneous branch (the last part of its child execution ids). */
  branchVisit(branch: string): number {
    const visit = (this.branchVisits[branch] ?? 0) + 1
    this.branchVisits[branch] = visit
    return visit
  }

  /** Opens a child execution created by the node `parent`. */
  openChild(executionId: string, parent: { readonly executionId: string; readonly seq: number }, now: number): void {
    this.open.set(executionId, { executionId, openedAt: now, lastSeq: -1, parent })
    this.opened.add(executionId)
    this.dirty.add(executionId)
  }

  /** Closes an open execution with how it ended. */
  close(executionId: string, status: LogExecutionStatus, now: number): void {
    const execution = this.open.get(executionId)
    if (execution === undefined) return
    this.open.delete(executionId)
    this.closed.set(executionId, { execution, status, closedAt: now })
    this.dirty.add(executionId)
  }

  /** The open executions other than the job's own (the running branch paths). */
  openChildren(): ReadonlyArray<string> {
    return [...this.open.keys()].filter((id) => id !== this.executionId)
  }

  /** What the state keeps. */
  finish(): ExecutionLogState {
    const hasVisits = Object.keys(this.branchVisits).length > 0
    return { executionId: this.executionId, open: [...this.open.values()], ...(hasVisits ? { branchVisits: this.branchVisits } : {}) }
  }

  /** The writes of this call: nodes in the order they were opened, then the execution records. */
  writes(identity: LogIdentity): ReadonlyArray<LogWrite> {
    const out: Array<LogWrite> = [...this.nodes.values()]
    const base = {
      jobId: identity.jobId,
      scope: identity.scope,
      workMasterId: identity.workMasterId,
      recipeDigest: identity.recipeDigest ?? ""
    }
    for (const id of this.dirty) {
      const open = this.open.get(id)
      const closed = this.closed.get(id)
      const execution = open ?? closed?.execution
      if (execution === undefined) continue
      const record: LogExecutionRecord = {
        executionId: id,
        ...base,
        ...(execution.parent !== undefined ? { parent: execution.parent } : {}),
        openedAt: execution.openedAt,
        ...(closed !== undefined ? { closedAt: closed.closedAt } : {}),
        status: closed?.status ?? "running",
        lastSeq: (open ?? closed!.execution).lastSeq
      }
      out.push({ type: "exec", opened: this.opened.has(id), record })
    }
    return out
  }
}
