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

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** A node write's key in `LogDraft.nodes`: a number for the usual sequence number (no string built per write). */
type NodeSlot = number | string

/**
 * The log side of one core call: hands out sequence numbers from the state, collects the node
 * writes (a key written twice in one call is written once, with its last value) and, at the end,
 * the records of the executions whose last sequence number, or status, changed. It copies as
 * little as it can: an open execution is copied on its first new node (then counted up in
 * place), the branch visits on their first change.
 */
export class LogDraft {
  readonly executionId: string
  private readonly open = new Map<string, LogExecution>()
  /** The open executions whose entry in `open` is this draft's own copy (counted up in place). */
  private readonly owned = new Set<string>()
  private branchVisits: Readonly<Record<string, number>> | undefined
  private ownVisits = false
  /** Child execution ids by their place in a node slot (the job's own execution is 0); made on first use. */
  private places: Map<string, number> | undefined
  private readonly nodes = new Map<NodeSlot, LogWrite>()
  private readonly dirty = new Set<string>()
  // Made on first use: most calls open and close no execution.
  private opened: Set<string> | undefined
  private closed: Map<string, ClosedExecution> | undefined

  private constructor(source: ExecutionLogState) {
    this.executionId = source.executionId
    for (const execution of source.open) this.open.set(execution.executionId, execution)
    this.branchVisits = source.branchVisits
  }

  /** The log of a state that has one. */
  static of(source: ExecutionLogState): LogDraft {
    return new LogDraft(source)
  }

  /** A new log: the job's execution opens now (at start, or on the first touch of an older state). */
  static fresh(executionId: string, openedAt: number, parent?: LogExecution["parent"]): LogDraft {
    // `parent`: a sub-recipe's child execution names its parent's action node.
    const draft = new LogDraft({ executionId, open: [{ executionId, openedAt, lastSeq: -1, ...(parent !== undefined ? { parent } : {}) }] })
    draft.opened = new Set([executionId])
    draft.dirty.add(executionId)
    return draft
  }

  isOpen(executionId: string): boolean {
    return this.open.has(executionId)
  }

  /** The execution's next sequence number, now taken; undefined when it is not open or full. */
  next(executionId: string): number | undefined {
    const execution = this.open.get(executionId)
    if (execution === undefined || execution.lastSeq >= MAX_LOG_SEQ) return undefined
    const seq = execution.lastSeq + 1
    if (this.owned.has(executionId)) (execution as Mutable<LogExecution>).lastSeq = seq
    else {
      // The state's entry stays as it was: the draft counts up a copy of its own (same fields, same order).
      const copy: Mutable<LogExecution> = { ...execution }
      copy.lastSeq = seq
      this.open.set(executionId, copy)
      this.owned.add(executionId)
    }
    this.dirty.add(executionId)
    return seq
  }

  /** Opens (writes) a node with the execution's next sequence number; undefined when it is not open or full. */
  node(executionId: string, node: Omit<LogNode, "seq">): number | undefined {
    const seq = this.next(executionId)
    if (seq !== undefined) this.put(executionId, { seq, ...node })
    return seq
  }

  /** Writes a node under its sequence number (opened with `next`, closed, or with a resend counted): an overwrite. */
  put(executionId: string, node: LogNode): void {
    this.nodes.set(this.slotOf(executionId, node.seq), { type: "node", executionId, node })
  }

  private slotOf(executionId: string, seq: number): NodeSlot {
    if (!Number.isSafeInteger(seq) || seq < 0 || seq > MAX_LOG_SEQ) return `${executionId}\n${seq}`
    if (executionId === this.executionId) return seq
    this.places ??= new Map()
    let place = this.places.get(executionId)
    if (place === undefined) {
      place = this.places.size + 1
      this.places.set(executionId, place)
    }
    return place * (MAX_LOG_SEQ + 1) + seq
  }

  /** The next visit of a simultaneous branch (the last part of its child execution ids). */
  branchVisit(branch: string): number {
    const visit = (this.branchVisits?.[branch] ?? 0) + 1
    const visits: Record<string, number> = this.ownVisits ? (this.branchVisits as Record<string, number>) : { ...this.branchVisits }
    visits[branch] = visit
    this.branchVisits = visits
    this.ownVisits = true
    return visit
  }

  /** Opens a child execution created by the node `parent`. */
  openChild(executionId: string, parent: { readonly executionId: string; readonly seq: number }, now: number): void {
    this.open.set(executionId, { executionId, openedAt: now, lastSeq: -1, parent })
    this.owned.delete(executionId)
    this.opened ??= new Set()
    this.opened.add(executionId)
    this.dirty.add(executionId)
  }

  /** Closes an open execution with how it ended. */
  close(executionId: string, status: LogExecutionStatus, now: number): void {
    const execution = this.open.get(executionId)
    if (execution === undefined) return
    this.open.delete(executionId)
    this.owned.delete(executionId)
    this.closed ??= new Map()
    this.closed.set(executionId, { execution, status, closedAt: now })
    this.dirty.add(executionId)
  }

  /** The open executions other than the job's own (the running branch paths). */
  openChildren(): ReadonlyArray<string> {
    const children: Array<string> = []
    for (const id of this.open.keys()) if (id !== this.executionId) children.push(id)
    return children
  }

  /** What the state keeps; the draft's copies become the state's (a later node copies again). */
  finish(): ExecutionLogState {
    this.owned.clear()
    this.ownVisits = false
    const visits = this.branchVisits
    const hasVisits = visits !== undefined && Object.keys(visits).length > 0
    return { executionId: this.executionId, open: [...this.open.values()], ...(hasVisits ? { branchVisits: visits } : {}) }
  }

  /** The writes of this call: nodes in the order they were opened, then the execution records. */
  writes(identity: LogIdentity): ReadonlyArray<LogWrite> {
    const out: Array<LogWrite> = []
    for (const write of this.nodes.values()) out.push(write)
    const recipeDigest = identity.recipeDigest ?? ""
    for (const id of this.dirty) {
      const open = this.open.get(id)
      const closed = this.closed?.get(id)
      const execution = open ?? closed?.execution
      if (execution === undefined) continue
      // Built field by field in the record's order (no spreads: this runs on every CAS).
      const record: Mutable<LogExecutionRecord> = {
        executionId: id, jobId: identity.jobId, scope: identity.scope, workMasterId: identity.workMasterId, recipeDigest
      } as Mutable<LogExecutionRecord>
      if (execution.parent !== undefined) record.parent = execution.parent
      record.openedAt = execution.openedAt
      if (closed !== undefined) record.closedAt = closed.closedAt
      record.status = closed?.status ?? "running"
      record.lastSeq = execution.lastSeq
      out.push({ type: "exec", opened: this.opened?.has(id) ?? false, record })
    }
    return out
  }
}
