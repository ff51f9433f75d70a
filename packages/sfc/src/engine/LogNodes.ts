import type { Draft } from "./Draft.js"
import { childExecutionIdOf } from "./SubRecipeIds.js"
import { childExecutionId, type LogExecutionStatus, type LogNode, type LogNodeKind } from "./ExecutionLog.js"
import type { ActionRun, ActiveStep, BranchRun } from "./ExecutionState.js"

/**
 * The nodes the core writes as it runs a recipe: each opens before its body
 * runs and is overwritten closed when it ends, under the same sequence number. Every function
 * here is a no-op for a state without a log (the runtime's log is off, or an old state in a test).
 * They run on every core call: nodes are built field by field, once, in the record's order
 * (conditional spreads copy an object per field in V8).
 */

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** The execution a step placed at top level or on a branch path runs in. */
const executionOfPlacement = (draft: Draft, branch: ActiveStep["branch"]): string | undefined => {
  const log = draft.log
  if (log === undefined) return undefined
  if (branch === undefined) return log.executionId
  return draft.branches.find((b) => b.name === branch.name)?.logNode?.children[branch.path] ?? log.executionId
}

/** The execution an action run's step runs in. */
export const executionOfRun = (draft: Draft, run: ActionRun): string | undefined => {
  const active = draft.active.find((a) => a.step === run.step && a.visit === run.visit)
  return executionOfPlacement(draft, active?.branch)
}

/** A node that opens and closes in the same call (an event, a transition, a timeout, ...). */
export const logInstant = (draft: Draft, kind: LogNodeKind, name: string, detail?: unknown, at?: { readonly run?: ActionRun; readonly visit?: number }): void => {
  const log = draft.log
  if (log === undefined) return
  const executionId = at?.run !== undefined ? executionOfRun(draft, at.run) : log.executionId
  if (executionId === undefined) return
  const seq = log.next(executionId)
  if (seq === undefined) return
  const visit = at?.visit ?? at?.run?.visit
  const node: Mutable<LogNode> =
    visit !== undefined ? { seq, kind, name, visit, openedAt: draft.now, closedAt: draft.now } : { seq, kind, name, openedAt: draft.now, closedAt: draft.now }
  if (detail !== undefined) node.detail = detail
  log.put(executionId, node)
}

/** Opens a step visit's node; returns its sequence number. */
export const logStepOpened = (draft: Draft, step: string, visit: number, branch: ActiveStep["branch"]): number | undefined => {
  const executionId = executionOfPlacement(draft, branch)
  if (executionId === undefined) return undefined
  const seq = draft.log!.next(executionId)
  if (seq !== undefined) draft.log!.put(executionId, { seq, kind: "step", name: step, visit, openedAt: draft.now })
  return seq
}

/** Closes a step visit's node (when the step is left, or the job ends). */
export const logStepClosed = (draft: Draft, active: ActiveStep): void => {
  const executionId = executionOfPlacement(draft, active.branch)
  if (executionId === undefined || active.logSeq === undefined) return
  draft.log!.put(executionId, {
    seq: active.logSeq, kind: "step", name: active.step, visit: active.visit, openedAt: active.enteredAt, closedAt: draft.now
  })
}

const actionDetail = (draft: Draft, run: ActionRun): Record<string, unknown> => {
  const detail: Record<string, unknown> = { typeId: draft.index.action(run.action)?.TypeId }
  if (run.correlationId !== undefined) {
    detail["correlationId"] = run.correlationId
    detail["attempts"] = run.attempts
  } else detail["awaits"] = "event"
  if (run.result !== undefined) detail["result"] = run.result
  if (run.error !== undefined) detail["error"] = run.error
  // A sub-recipe's node links to its child's execution (the child's root names this node back).
  const child = childExecutionIdOf(draft, run)
  if (child !== undefined) detail["childExecutionId"] = child
  return detail
}

/** Opens the node of an action run about to be pushed into `draft.actions`; returns the run with its node. */
export const logActionOpened = (draft: Draft, run: ActionRun, branch: ActiveStep["branch"]): ActionRun => {
  const executionId = executionOfPlacement(draft, branch)
  if (executionId === undefined) return run
  const seq = draft.log!.next(executionId)
  if (seq === undefined) return run
  draft.log!.put(executionId, { seq, kind: "action", name: run.action, visit: run.visit, openedAt: draft.now, detail: actionDetail(draft, run) })
  return { ...run, logNode: { seq, at: draft.now } }
}

/**
 * Writes an action run's node again: still open with its sends counted (a resend, a retry), or
 * closed with its reply, result or error. A closed node is forgotten by the run.
 */
export const logActionWritten = (draft: Draft, at: number, closed: boolean, executionId?: string): void => {
  const run = draft.actions[at]
  if (run?.logNode === undefined || draft.log === undefined) return
  const into = executionId ?? executionOfRun(draft, run)
  if (into === undefined) return
  draft.log.put(
    into,
    closed
      ? { seq: run.logNode.seq, kind: "action", name: run.action, visit: run.visit, openedAt: run.logNode.at, closedAt: draft.now, detail: actionDetail(draft, run) }
      : { seq: run.logNode.seq, kind: "action", name: run.action, visit: run.visit, openedAt: run.logNode.at, detail: actionDetail(draft, run) }
  )
  if (closed) draft.actions[at] = withoutLogNode(run)
}

// A plain copy loop: object rest with an excluded key is a slow runtime call in V8, once per step here.
const withoutLogNode = (run: ActionRun): ActionRun => {
  const rest: Record<string, unknown> = {}
  for (const field in run) if (field !== "logNode") rest[field] = run[field as keyof ActionRun]
  return rest as unknown as ActionRun
}

/** Closes the nodes of the runs a step leaves with (pulses, and everything when the job ends). */
export const logRunsLeft = (draft: Draft, active: ActiveStep, runs: ReadonlyArray<ActionRun>): void => {
  const executionId = executionOfPlacement(draft, active.branch)
  if (executionId === undefined) return
  for (const run of runs) {
    if (run.logNode === undefined) continue
    draft.log!.put(executionId, {
      seq: run.logNode.seq, kind: "action", name: run.action, visit: run.visit, openedAt: run.logNode.at, closedAt: draft.now, detail: actionDetail(draft, run)
    })
  }
}

/**
 * Opens a simultaneous branch's node and one child execution per path (every path runs), and
 * returns what the branch run keeps of them (nothing without a log).
 */
export const logBranchOpened = (draft: Draft, branch: string, paths: ReadonlyArray<number>): Pick<BranchRun, "logNode"> => {
  const log = draft.log
  if (log === undefined) return {}
  const visit = log.branchVisit(branch)
  const children = paths.map((path) => childExecutionId(log.executionId, branch, path, visit))
  const seq = log.next(log.executionId)
  if (seq === undefined) return {}
  log.put(log.executionId, { seq, kind: "branch", name: branch, visit, openedAt: draft.now, children })
  for (const child of children) log.openChild(child, { executionId: log.executionId, seq }, draft.now)
  return { logNode: { seq, visit, children } }
}

/** Closes a branch path's child execution (its last step was left, or the job ended). */
export const logPathEnded = (draft: Draft, run: BranchRun, path: number, status: LogExecutionStatus = "completed"): void => {
  const child = run.logNode?.children[path]
  if (child !== undefined) draft.log?.close(child, status, draft.now)
}

/** Closes a branch node (its paths converged, or the job ended). */
export const logBranchClosed = (draft: Draft, run: BranchRun): void => {
  const log = draft.log
  if (log === undefined || run.logNode === undefined) return
  const { seq, visit, children } = run.logNode
  log.put(log.executionId, { seq, kind: "branch", name: run.name, visit, openedAt: run.enteredAt, closedAt: draft.now, children })
}

/** The job ended: the branch paths still running and the job's own execution close with its status. */
export const logFinished = (draft: Draft, status: Exclude<LogExecutionStatus, "running">): void => {
  const log = draft.log
  if (log === undefined) return
  for (const child of log.openChildren()) log.close(child, status, draft.now)
  log.close(log.executionId, status, draft.now)
}

/** A node that opens and closes now in the execution an active step runs in (an intervention on the step). */
export const logStepInstant = (draft: Draft, active: ActiveStep, kind: LogNodeKind, name: string, detail: unknown): void => {
  const executionId = executionOfPlacement(draft, active.branch)
  if (executionId === undefined) return
  draft.log!.node(executionId, { kind, name, visit: active.visit, openedAt: draft.now, closedAt: draft.now, detail })
}

/** Closes the node of an open action an operator abandoned (its step was skipped), saying so. */
export const logActionAbandoned = (draft: Draft, at: number, why: string): void => {
  const run = draft.actions[at]
  if (run?.logNode === undefined || draft.log === undefined) return
  const into = executionOfRun(draft, run)
  if (into === undefined) return
  const detail = { ...actionDetail(draft, run), abandoned: why }
  draft.log.put(into, { seq: run.logNode.seq, kind: "action", name: run.action, visit: run.visit, openedAt: run.logNode.at, closedAt: draft.now, detail })
  draft.actions[at] = withoutLogNode(run)
}
