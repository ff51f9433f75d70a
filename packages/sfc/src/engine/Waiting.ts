import { stepTimeThresholds } from "../condition/index.js"
import type { Draft } from "./Draft.js"
import type { ActiveStep, BranchRun, ExecutionState } from "./ExecutionState.js"
import type { RecipeIndex } from "./RecipeIndex.js"
import { elapsedOf } from "./StepClocks.js"
import { countersNamed } from "./TransitionCounters.js"

/**
 * Waiting transitions (v1.1.0). A step whose actions are done, or a branch whose paths all
 * ended, and of whose transitions none holds, stays where it is (v1.0.0 fails the job there):
 * it waits, marked with the time its transitions were last evaluated (`checkedAt`), until
 * something they read changes. Then they are evaluated again:
 * - an event for one of the step's open actions (a pulse that answers late) changes its results;
 * - a step's time, `Press.T > 30s`: the instant it can turn true is in the due index;
 * - a counter: nothing tells the engine that one changed (they also change as time windows
 *   slide), so the due index asks for a re-read every `COUNTER_RECHECK_MS` (or the state's
 *   `counterRecheckMs`, the runtime's setting);
 * - Resume, and a job order update (`order.*` fields).
 * The recipe's flow has one token at top level (only branch paths run side by side, and their
 * steps advance by list order), so at most one step or branch waits at a time.
 * A source waits only when something can still change: an open action of the step, a counter,
 * a `T` threshold still ahead, or its own MaxDuration. Otherwise nothing would ever move it, and
 * the job fails as in v1.0.0.
 */

/** How often the counters a waiting step's transitions read are read again (ms), unless the state says otherwise. */
export const COUNTER_RECHECK_MS = 5_000

/** `{ counterRecheckMs }` for a new state when the runtime asks for another interval than the default. */
export const counterRecheck = (v11: boolean, ms: number | undefined): { readonly counterRecheckMs?: number } =>
  v11 && ms !== undefined && ms > 0 && ms !== COUNTER_RECHECK_MS ? { counterRecheckMs: ms } : {}

/** A step or branch being left by its transitions. */
export type Source = { readonly step: ActiveStep } | { readonly branch: BranchRun }

/** What a source's transitions (and the paths of the selection branches they lead to) read that can change while it waits. */
interface WaitReads {
  readonly counters: boolean
  /** Thresholds of the source step's own time (`T`), in ms since it was entered. */
  readonly thresholds: ReadonlyArray<number>
}

const cache = new WeakMap<RecipeIndex, Map<string, WaitReads>>()

/** The transitions evaluated when `source` is left: its own, and those into the paths of selection branches it leads to. */
export const exitConditions = (index: RecipeIndex, source: string): ReadonlyArray<{ readonly Condition: string }> => {
  const own = index.outgoing(source)
  const ownPaths = new Set(index.branch(source)?.Branches.map((path) => path[0]!) ?? [])
  const exits = own.filter((t) => !ownPaths.has(t.Target))
  const into = exits.flatMap((t) => {
    const branch = index.branch(t.Target)
    if (branch?.Type !== "selection") return []
    const firstSteps = new Set(branch.Branches.map((path) => path[0]!))
    return index.outgoing(branch.Name).filter((p) => firstSteps.has(p.Target))
  })
  return [...exits, ...into]
}

const readsOf = (index: RecipeIndex, source: string): WaitReads => {
  let bySource = cache.get(index)
  if (!bySource) cache.set(index, (bySource = new Map()))
  let reads = bySource.get(source)
  if (!reads) {
    const conditions = exitConditions(index, source)
    const thresholds = conditions.flatMap((t) => {
      const ast = index.v11 ? index.parse(t.Condition) : undefined
      return ast === undefined ? [] : stepTimeThresholds(ast).flatMap((threshold) => (threshold.step === source ? [threshold.ms] : []))
    })
    reads = { counters: countersNamed(index, conditions).length > 0, thresholds: [...new Set(thresholds)] }
    bySource.set(source, reads)
  }
  return reads
}

const nameOf = (source: Source): string => ("step" in source ? source.step.step : source.branch.name)

/** The first threshold of a step's time after `after`: `>=` turns true at it, `>` one ms later. */
const nextThreshold = (active: ActiveStep, thresholds: ReadonlyArray<number>, after: number): number | undefined => {
  let next: number | undefined
  const base = active.enteredAt + (active.heldMs ?? 0)
  for (const ms of thresholds) {
    for (const at of [base + ms, base + ms + 1]) if (at > after && (next === undefined || at < next)) next = at
  }
  return next
}

/** Whether something the source's transitions read can still change, so waiting can end. */
const canChange = (draft: Draft, source: Source): boolean => {
  const reads = readsOf(draft.index, nameOf(source))
  if (reads.counters) return true
  if (!("step" in source)) return false
  const { step } = source
  if (step.limitAt !== undefined) return true
  if (reads.thresholds.some((ms) => ms >= elapsedOf(step, draft.now))) return true
  return draft.actions.some((r) => r.step === step.step && r.visit === step.visit && (r.state === "dispatched" || r.state === "waiting" || r.state === "pending"))
}

/**
 * v1.1.0: marks `source` as waiting when something its transitions read can still change, and
 * says so; false (v1.0.0, or nothing can change) leaves the failing to the caller.
 */
export const waitAt = (draft: Draft, source: Source): boolean => {
  if (!draft.index.v11 || !canChange(draft, source)) return false
  if ("step" in source) {
    const at = draft.active.indexOf(source.step)
    draft.active[at] = { ...source.step, checkedAt: draft.now }
  } else {
    const at = draft.branches.indexOf(source.branch)
    draft.branches[at] = { ...source.branch, checkedAt: draft.now }
  }
  draft.touch()
  return true
}

/**
 * When the waiting step's (or branch's) transitions must be evaluated again without any input
 * (a step time threshold, a counter re-read), or `undefined`.
 */
export const nextCheckOf = (
  state: Pick<ExecutionState, "active" | "branches"> & { readonly counterRecheckMs?: number | undefined },
  index: RecipeIndex
): number | undefined => {
  let next: number | undefined
  const recheck = state.counterRecheckMs ?? COUNTER_RECHECK_MS
  const consider = (at: number | undefined) => {
    if (at !== undefined && (next === undefined || at < next)) next = at
  }
  for (const active of state.active) {
    if (active.checkedAt === undefined) continue
    const reads = readsOf(index, active.step)
    if (reads.counters) consider(active.checkedAt + recheck)
    consider(nextThreshold(active, reads.thresholds, active.checkedAt))
  }
  for (const run of state.branches) {
    if (run.checkedAt !== undefined && readsOf(index, run.name).counters) consider(run.checkedAt + recheck)
  }
  return next
}

/** A tick: asks `settle` to evaluate the waiting transitions again when their next check is due. */
export const markDueRecheck = (draft: Draft): void => {
  const at = nextCheckOf({ active: draft.active, branches: draft.branches, counterRecheckMs: draft.state.counterRecheckMs }, draft.index)
  if (at !== undefined && at <= draft.now) draft.recheck = true
}
