import { Result } from "effect"
import { correlationIdOf } from "./Correlation.js"
import type { Draft } from "./Draft.js"
import type { ActionRun, ActiveStep } from "./ExecutionState.js"
import type { ActionResult } from "./RecipeIndex.js"
import { chooseTransitionOf } from "./TransitionCounters.js"
import { withCarried } from "./CarriedResults.js"
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
  draft.active.push({ step, visit, enteredAt: draft.now, ...(branch ? { branch } : {}), ...(logSeq !== undefined ? { logSeq } : {}) })
  draft.record({ step, visit, enteredAt: draft.now })
  for (const action of draft.index.actionsOf(step)) {
    const timeoutMs = action.TimeoutSeconds * 1000
    const pulse = action.Qualifier === "P"
    if (action.Interaction === "push_command") {
      const correlationId = correlationIdOf(draft.state.jobId, action.Name, visit)
      draft.actions.push(logActionOpened(draft, {
        action: action.Name, step, visit, state: "dispatched", correlationId, attempts: 1,
        ...(pulse ? {} : { deadline: draft.now + timeoutMs })
      }, branch))
      draft.emit({
        type: "command", jobId: draft.state.jobId, action: action.Name, correlationId, typeId: action.TypeId,
        parameters: (action.Parameters ?? {}) as Record<string, unknown>, subject: draft.state.scope, attempt: 1
      })
    } else {
      draft.actions.push(logActionOpened(draft, {
        action: action.Name, step, visit, state: "waiting", attempts: 0, waitSince: draft.now,
        ...(pulse ? {} : { deadline: draft.now + timeoutMs })
      }, branch))
    }
  }
  draft.touch()
}

/** Enters a transition target: a step, or a branch (all paths, or the chosen one). */
export const enterTarget = (draft: Draft, target: string, results: ReadonlyArray<ActionResult>): void => {
  const branch = draft.index.branch(target)
  if (!branch) return enterStep(draft, target)
  const firstSteps = branch.Branches.map((path) => path[0]!)
  let paths: Array<number>
  if (branch.Type === "simultaneous") {
    paths = firstSteps.map((_, i) => i)
  } else {
    const into = draft.index.outgoing(branch.Name).filter((t) => firstSteps.includes(t.Target))
    const choice = into.length > 0 ? chooseTransitionOf(draft.index, draft.counters, branch.Name, into, results) : Result.succeed(undefined)
    if (Result.isFailure(choice)) return failJob(draft, `selection branch ${branch.Name}: ${choice.failure.message}`)
    const chosen = choice.success
    if (into.length > 0 && !chosen) return failJob(draft, `no path of selection branch ${branch.Name} has a condition that holds`)
    paths = [chosen ? firstSteps.indexOf(chosen.Target) : 0]
  }
  // A simultaneous branch runs each path as a child execution of the log; a selection path runs inline.
  const logged = branch.Type === "simultaneous" ? logBranchOpened(draft, branch.Name, paths) : {}
  draft.branches.push({ name: branch.Name, enteredAt: draft.now, runningPaths: paths, ...logged })
  for (const path of paths) enterStep(draft, firstSteps[path]!, { name: branch.Name, path })
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
  logRunsLeft(draft, active, runs)
  logStepClosed(draft, active)
  draft.actions = draft.actions.filter((r) => !(r.step === active.step && r.visit === active.visit))
  draft.active = draft.active.filter((a) => a !== active)
  const at = draft.history.findLastIndex((h) => h.step === active.step && h.visit === active.visit)
  if (at >= 0) draft.history[at] = { ...draft.history[at]!, leftAt: draft.now }
  return runs
}

/** A step is done when every N action of its current visit completed; pulses never hold it. */
const isDone = (draft: Draft, active: ActiveStep): boolean =>
  draft.actions.every(
    (r) => r.step !== active.step || r.visit !== active.visit || r.state === "completed" || draft.index.action(r.action)?.Qualifier === "P"
  )

/** Leaves a source (step or branch) by its transitions: lowest priority that holds wins. */
const takeTransition = (draft: Draft, source: string, results: ReadonlyArray<ActionResult>, exclude: ReadonlyArray<string> = []): void => {
  const outgoing = draft.index.outgoing(source).filter((t) => !exclude.includes(t.Target))
  if (outgoing.length === 0) {
    if (draft.active.length === 0) completeJob(draft)
    return
  }
  const choice = chooseTransitionOf(draft.index, draft.counters, source, outgoing, results)
  if (Result.isFailure(choice)) return failJob(draft, `transition out of ${source}: ${choice.failure.message}`)
  const chosen = choice.success
  if (!chosen) return failJob(draft, `no transition out of ${source} has a condition that holds`)
  logInstant(draft, "transition", `${source} -> ${chosen.Target}`)
  enterTarget(draft, chosen.Target, results)
}

/** Advances one finished step. */
const advance = (draft: Draft, active: ActiveStep): void => {
  const runs = leaveStep(draft, active)
  const results = withCarried(active, resultsOf(draft, runs))
  if (!active.branch) return takeTransition(draft, active.step, results)

  const branch = draft.index.branch(active.branch.name)!
  const path = branch.Branches[active.branch.path]!
  const next = path[path.indexOf(active.step) + 1]
  if (next !== undefined) return enterStep(draft, next, active.branch)

  const at = draft.branches.findIndex((b) => b.name === branch.Name)
  logPathEnded(draft, draft.branches[at]!, active.branch.path)
  const running = draft.branches[at]!.runningPaths.filter((p) => p !== active.branch!.path)
  if (running.length > 0) {
    draft.branches[at] = { ...draft.branches[at]!, runningPaths: running }
    return
  }
  logBranchClosed(draft, draft.branches[at]!)
  draft.branches.splice(at, 1)
  // The branch converges: leave it like a step, by the transitions whose source is its name
  // (the ones into its own paths are for choosing a selection path, not for leaving).
  const firstSteps = branch.Branches.map((p) => p[0]!)
  const branchResults = resultsOf(draft, runsSince(draft, results))
  takeTransition(draft, branch.Name, branchResults, firstSteps)
}

/** The results visible when a branch converges: every action's latest result, recipe order. */
const runsSince = (draft: Draft, last: ReadonlyArray<ActionResult>): ReadonlyArray<ActionRun> => {
  const latest = new Map(Object.entries(draft.results).map(([action, result]) => [action, result]))
  for (const r of last) latest.set(r.action, r.result)
  return [...latest].map(([action, result]) => ({ action, step: "", visit: 0, state: "completed" as const, attempts: 0, result }))
}

/** Advances every finished step until nothing moves (one write covers all of it). */
export const settle = (draft: Draft): void => {
  for (let entries = 0; draft.state.status === "running"; entries++) {
    if (entries > MAX_ENTRIES_PER_CALL) return failJob(draft, "the recipe keeps entering steps without waiting for anything")
    const done = draft.active.find((a) => isDone(draft, a))
    if (!done) {
      if (draft.active.length === 0) completeJob(draft)
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
  // A command held back by a pause never goes out once the job has ended.
  delete draft.state.heldCommands
  if (error !== undefined) logInstant(draft, "error", status, { error, ...by })
  for (const active of [...draft.active]) leaveStep(draft, active)
  for (const run of draft.branches) logBranchClosed(draft, run)
  logFinished(draft, status)
  draft.branches = []
  draft.actions = []
  draft.touch()
  const jobId = draft.state.jobId
  if (status === "completed") draft.emit({ type: "joborder", jobId, trigger: "Complete" })
  if (status === "failed") draft.emit({ type: "joborder", jobId, trigger: "Abort" })
  draft.emit({
    type: "jobresponse",
    jobId,
    responseId: `${jobId}-response`,
    state: status === "completed" || status === "stopped" ? "Ended_Completed" : "Aborted",
    startTime: draft.state.startedAt,
    endTime: draft.now,
    data: { ...draft.results },
    ...(error !== undefined ? { error } : {})
  })
}

export const completeJob = (draft: Draft): void => finish(draft, "completed")
export const failJob = (draft: Draft, error: string): void => finish(draft, "failed", error)
export const stopJob = (draft: Draft): void => finish(draft, "stopped")
/** `by`: who aborted it, for its error node (Interventions.ts). */
export const abortJob = (draft: Draft, reason: string, by?: Readonly<Record<string, string>>): void => finish(draft, "aborted", reason, by)
