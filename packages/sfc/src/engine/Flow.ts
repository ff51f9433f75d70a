import { Result } from "effect"
import { chooseExit, choosePath } from "./ChooseExit.js"
import { correlationIdOf } from "./Correlation.js"
import type { Draft } from "./Draft.js"
import type { ActionRun, ActiveStep, BranchRun } from "./ExecutionState.js"
import type { OutboxEntry } from "./Outbox.js"
import type { ActionResult } from "./RecipeIndex.js"
import { withCarried } from "./CarriedResults.js"
import { endQualified, enterQualified, leftQualified } from "./QualifiedCommands.js"
import { recordStepTime } from "./StepClocks.js"
import { stepLimit } from "./TimeLimits.js"
import { dispatchEntry, endChildren, endEntries } from "./SubRecipes.js"
import { type Source, waitAt } from "./Waiting.js"
import {
  logActionOpened,
  logBranchClosed,
  logBranchOpened,
  logFinished,
  logInstant,
  logPathEnded,
  logRunsLeft,
  logStepClosed,
  logStepOpened
} from "./LogNodes.js"

/**
 * Step entry, advancing, branches and finishing. Every function changes one draft;
 * the caller turns the draft into a single CAS write.
 */

/** A backstop behind the re-entry check of `enterStep`: no call enters more steps than this. */
const MAX_ENTRIES_PER_CALL = 1000

export const enterStep = (draft: Draft, step: string, branch?: ActiveStep["branch"]): void => {
  // A job that failed while entering a branch's earlier path must not dispatch its later paths.
  if (draft.state.status !== "running") return
  // Nothing completes an action during one call, so a step entered twice in one call has no N
  // action and every choice on the way back to it read the same results: the recipe would cycle
  // forever. Failing at the second entry (rather than at the entry cap) sends each pulse of the
  // cycle once instead of hundreds of times.
  if (draft.entered.has(step)) return failJob(draft, `the recipe loops through step ${step} without waiting for anything`)
  draft.entered.add(step)
  const visit = (draft.visits[step] ?? 0) + 1
  draft.visits[step] = visit
  // The step's node opens before its actions' nodes: the log shows the visit, then what it did.
  const logSeq = logStepOpened(draft, step, visit, branch)
  draft.active.push({ step, visit, enteredAt: draft.now, ...(branch ? { branch } : {}), ...(logSeq !== undefined ? { logSeq } : {}), ...stepLimit(draft, step) })
  draft.record({ step, visit, enteredAt: draft.now })
  for (const action of draft.index.actionsOf(step)) {
    const timeoutMs = action.TimeoutSeconds * 1000
    const pulse = action.Qualifier === "P"
    if (action.Qualifier !== "N" && !pulse) {
      const run = enterQualified(draft, action, step, visit)
      if (run !== undefined) draft.actions.push(logActionOpened(draft, run, branch))
    } else if (action.Interaction !== "pull_event") {
      // A sub-recipe is dispatched like a command: its child's end answers its correlation id.
      const correlationId = correlationIdOf(draft.state.jobId, action.Name, visit)
      draft.actions.push(logActionOpened(draft, {
        action: action.Name, step, visit, state: "dispatched", correlationId, attempts: 1,
        ...(pulse ? {} : { deadline: draft.now + timeoutMs })
      }, branch))
      draft.emit(dispatchEntry(draft, action, draft.actions.at(-1)!, 1))
    } else {
      draft.actions.push(logActionOpened(draft, {
        action: action.Name, step, visit, state: "waiting", attempts: 0, waitSince: draft.now,
        ...(pulse ? {} : { deadline: draft.now + timeoutMs })
      }, branch))
    }
  }
  draft.touch()
}

/**
 * Enters a transition target: a step, or a branch (all paths, or the chosen one: `path` when it
 * was chosen with the transition, else chosen here).
 */
export const enterTarget = (draft: Draft, target: string, results: ReadonlyArray<ActionResult>, path?: number): void => {
  const branch = draft.index.branch(target)
  if (!branch) return enterStep(draft, target)
  const firstSteps = branch.Branches.map((p) => p[0]!)
  let paths: Array<number>
  if (branch.Type === "simultaneous") {
    paths = firstSteps.map((_, i) => i)
  } else {
    const choice = path === undefined ? choosePath(draft, branch, results) : Result.succeed(path)
    if (Result.isFailure(choice)) return failJob(draft, choice.failure)
    if (choice.success === undefined) return failJob(draft, `no path of selection branch ${branch.Name} has a condition that holds`)
    paths = [choice.success]
  }
  // A simultaneous branch runs each path as a child execution of the log; a selection path runs inline.
  const logged = branch.Type === "simultaneous" ? logBranchOpened(draft, branch.Name, paths) : {}
  draft.branches.push({ name: branch.Name, enteredAt: draft.now, runningPaths: paths, ...logged })
  for (const p of paths) enterStep(draft, firstSteps[p]!, { name: branch.Name, path: p })
}

/** Results of the given actions' runs, in recipe order (later actions win on a bare name). */
export const resultsOf = (draft: Draft, runs: ReadonlyArray<ActionRun>): Array<ActionResult> =>
  runs
    .filter((r) => r.state === "completed")
    .sort((a, b) => draft.index.actionOrder(a.action) - draft.index.actionOrder(b.action))
    .map((r) => ({ action: r.action, result: r.result }))

/** Leaves an active step: closes its nodes, drops its runs, returns them. */
export const leaveStep = (draft: Draft, active: ActiveStep): ReadonlyArray<ActionRun> => {
  const runs = draft.actions.filter((r) => r.step === active.step && r.visit === active.visit)
  endChildren(draft, runs, draft.state.status === "running" ? `step ${active.step} was left` : `the parent job ${draft.state.status}`)
  logRunsLeft(draft, active, runs)
  logStepClosed(draft, active)
  draft.actions = draft.actions.filter((r) => !(r.step === active.step && r.visit === active.visit))
  draft.active = draft.active.filter((a) => a !== active)
  const at = draft.history.findLastIndex((h) => h.step === active.step && h.visit === active.visit)
  if (at >= 0) draft.history[at] = { ...draft.history[at]!, leftAt: draft.now }
  recordStepTime(draft, active)
  leftQualified(draft, active)
  return runs
}

/** A step is done when every N action of its current visit completed; no other qualifier holds it. */
const isDone = (draft: Draft, active: ActiveStep): boolean =>
  draft.actions.every(
    (r) => r.step !== active.step || r.visit !== active.visit || r.state === "completed" || draft.index.action(r.action)?.Qualifier !== "N"
  )

/** No step is active and no branch waits: the job is done. */
const isIdle = (draft: Draft): boolean => draft.active.length === 0 && draft.branches.length === 0

/** A branch is left: its node closes. */
const closeBranch = (draft: Draft, run: BranchRun): void => {
  const at = draft.branches.findIndex((b) => b.name === run.name)
  logBranchClosed(draft, draft.branches[at]!)
  draft.branches.splice(at, 1)
}

const leaveSource = (draft: Draft, source: Source): void => void ("step" in source ? leaveStep(draft, source.step) : closeBranch(draft, source.branch))

/**
 * Leaves a source (step or branch) by its transitions: lowest priority that holds wins. With
 * none, v1.1.0 waits there when something they read can change (Waiting.ts); v1.0.0 fails.
 */
const takeTransition = (draft: Draft, source: Source, name: string, results: ReadonlyArray<ActionResult>, exclude: ReadonlyArray<string> = []): void => {
  const outgoing = draft.index.outgoing(name).filter((t) => !exclude.includes(t.Target))
  if (outgoing.length === 0) {
    leaveSource(draft, source)
    if (isIdle(draft)) completeJob(draft)
    return
  }
  const choice = chooseExit(draft, name, outgoing, results)
  if (Result.isFailure(choice)) {
    leaveSource(draft, source)
    return failJob(draft, choice.failure)
  }
  const chosen = choice.success
  if (!chosen && waitAt(draft, source)) return
  leaveSource(draft, source)
  if (!chosen) return failJob(draft, `no transition out of ${name} has a condition that holds${draft.index.v11 ? ", and nothing its conditions read can change" : ""}`)
  logInstant(draft, "transition", `${name} -> ${chosen.transition.Target}`)
  enterTarget(draft, chosen.transition.Target, results, chosen.path)
}

/** Advances one finished step: a top-level one by its transitions, a path step to the next step of its path. */
const advance = (draft: Draft, active: ActiveStep): void => {
  if (!active.branch) {
    const runs = draft.actions.filter((r) => r.step === active.step && r.visit === active.visit)
    // A step entered by an OnError reads the failed step's results before its own (CarriedResults.ts).
    return takeTransition(draft, { step: active }, active.step, withCarried(active, resultsOf(draft, runs)))
  }
  const results = resultsOf(draft, leaveStep(draft, active))
  const branch = draft.index.branch(active.branch.name)!
  const path = branch.Branches[active.branch.path]!
  const next = path[path.indexOf(active.step) + 1]
  if (next !== undefined) return enterStep(draft, next, active.branch)

  const at = draft.branches.findIndex((b) => b.name === branch.Name)
  logPathEnded(draft, draft.branches[at]!, active.branch.path)
  const running = draft.branches[at]!.runningPaths.filter((p) => p !== active.branch!.path)
  draft.branches[at] = { ...draft.branches[at]!, runningPaths: running }
  if (running.length > 0) return
  // The branch converges: leave it like a step, by the transitions whose source is its name
  // (the ones into its own paths are for choosing a selection path, not for leaving).
  leaveBranch(draft, draft.branches[at]!, results)
}

/** Leaves a branch whose paths all ended, with every action's latest result (recipe order). */
const leaveBranch = (draft: Draft, run: BranchRun, last: ReadonlyArray<ActionResult>): void => {
  const firstSteps = draft.index.branch(run.name)!.Branches.map((p) => p[0]!)
  takeTransition(draft, { branch: run }, run.name, resultsOf(draft, runsSince(draft, last)), firstSteps)
}

/** The results visible when a branch converges: every action's latest result, recipe order. */
const runsSince = (draft: Draft, last: ReadonlyArray<ActionResult>): ReadonlyArray<ActionRun> => {
  const latest = new Map(Object.entries(draft.results).map(([action, result]) => [action, result]))
  for (const r of last) latest.set(r.action, r.result)
  return [...latest].map(([action, result]) => ({ action, step: "", visit: 0, state: "completed" as const, attempts: 0, result }))
}

/** v1.1.0: the waiting step's (or branch's) transitions once more: something they read may have changed. */
const recheckWaiting = (draft: Draft): void => {
  const at = draft.active.findIndex((a) => a.checkedAt !== undefined)
  if (at >= 0) {
    // Unmarked, the step is done again: `settle` evaluates its transitions.
    const { checkedAt: _checked, ...step } = draft.active[at]!
    draft.active[at] = step
    return draft.touch()
  }
  const run = draft.branches.find((b) => b.checkedAt !== undefined)
  if (run === undefined) return
  const { checkedAt: _checked, ...unmarked } = run
  draft.branches[draft.branches.indexOf(run)] = unmarked
  draft.touch()
  leaveBranch(draft, unmarked, [])
}

/** Advances every finished step until nothing moves (one write covers all of it); a waiting one only on a recheck. */
export const settle = (draft: Draft): void => {
  if (draft.recheck) {
    draft.recheck = false
    recheckWaiting(draft)
  }
  for (let entries = 0; draft.state.status === "running"; entries++) {
    if (entries > MAX_ENTRIES_PER_CALL) return failJob(draft, "the recipe keeps entering steps without waiting for anything")
    const done = draft.active.find((a) => a.checkedAt === undefined && isDone(draft, a))
    if (!done) {
      if (isIdle(draft)) completeJob(draft)
      return
    }
    advance(draft, done)
  }
}

const finish = (draft: Draft, status: "completed" | "failed" | "aborted" | "stopped", error?: string, by?: Readonly<Record<string, string>>): void => {
  draft.state.status = status
  draft.state.endedAt = draft.now
  if (error !== undefined) draft.state.error = error
  delete draft.state.pausedAt
  // A command held back by a pause never goes out once the job has ended, but a stop does: it
  // ends an effect the equipment keeps up (the runtime lets it out, `isStopAfterEnd`).
  const heldStops = (draft.state.heldCommands ?? []).filter((c) => c.stop === true)
  delete draft.state.heldCommands
  for (const command of heldStops) draft.emit(command)
  if (error !== undefined) logInstant(draft, "error", status, { error, ...by })
  for (const active of [...draft.active]) leaveStep(draft, active)
  for (const run of draft.branches) logBranchClosed(draft, run)
  logFinished(draft, status)
  draft.branches = []
  draft.actions = []
  endQualified(draft)
  draft.touch()
  for (const entry of endEntries(draft, status, error, () => jobEnd(draft, status, error))) draft.emit(entry)
}

/** A job's end: its job order's move (when the engine ended it) and its job response. */
const jobEnd = (draft: Draft, status: "completed" | "failed" | "aborted" | "stopped", error?: string): ReadonlyArray<OutboxEntry> => {
  const jobId = draft.state.jobId
  return [
    ...(status === "completed" ? [{ type: "joborder", jobId, trigger: "Complete" } as const] : []),
    ...(status === "failed" ? [{ type: "joborder", jobId, trigger: "Abort", ...(error !== undefined ? { reason: error } : {}) } as const] : []),
    {
      type: "jobresponse",
      jobId,
      responseId: `${jobId}-response`,
      state: status === "completed" || status === "stopped" ? "Ended_Completed" : "Aborted",
      startTime: draft.state.startedAt,
      endTime: draft.now,
      data: { ...draft.results },
      ...(error !== undefined ? { error } : {})
    }
  ]
}

export const completeJob = (draft: Draft): void => finish(draft, "completed")
export const failJob = (draft: Draft, error: string): void => finish(draft, "failed", error)
export const stopJob = (draft: Draft): void => finish(draft, "stopped")
/** `by`: who aborted it, for its error node (Interventions.ts). */
export const abortJob = (draft: Draft, reason: string, by?: Readonly<Record<string, string>>): void => finish(draft, "aborted", reason, by)
