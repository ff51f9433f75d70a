import type { ActionRun, ActiveStep, BranchRun, ExecutionState, StepRecord } from "./ExecutionState.js"
import { HISTORY_LIMIT } from "./ExecutionState.js"
import { LogDraft, type LogIdentity } from "./LogDraft.js"
import type { LogWrite } from "./ExecutionLog.js"
import type { OutboxEntry } from "./Outbox.js"
import { indexRecipe, type RecipeIndex } from "./RecipeIndex.js"
import { CounterReadings } from "./TransitionCounters.js"

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * A mutable working copy of one state for the length of one core call. The core stays a pure
 * function: it copies the input state into a draft, changes the draft, and returns a new state.
 */
export class Draft {
  readonly index: RecipeIndex
  readonly now: number
  state: Mutable<Omit<ExecutionState, "visits" | "active" | "branches" | "actions" | "results" | "history" | "log">>
  visits: Record<string, number>
  active: Array<ActiveStep>
  branches: Array<BranchRun>
  actions: Array<ActionRun>
  results: Record<string, unknown>
  history: Array<StepRecord>
  readonly outbox: Array<OutboxEntry> = []
  /** Steps entered during this call: a second entry means the recipe cycles without waiting. */
  readonly entered = new Set<string>()
  changed = false
  /**
   * v1.1.0: something the waiting step's (or branch's) transitions read may have changed (an
   * event, a due step time or counter re-read, Resume, a job order update): `settle` evaluates them again.
   */
  recheck = false
  /** The counter values the runtime read for this call (see TransitionCounters.ts); none by default. */
  counters = new CounterReadings([])
  /** The execution log of this call; undefined when the state has none and no id was given. */
  readonly log: LogDraft | undefined
  private readonly sourceLog: ExecutionState["log"]

  /** `freshExecutionId`: the id a state without a log gets (the runtime's choice, at start or first touch). */
  constructor(source: ExecutionState, now: number, freshExecutionId?: string) {
    const { visits, active, branches, actions, results, history, log, ...rest } = source
    this.sourceLog = log
    this.log = log !== undefined ? LogDraft.of(log) : freshExecutionId !== undefined ? LogDraft.fresh(freshExecutionId, source.startedAt, source.parent?.log) : undefined
    this.index = indexRecipe(source.recipe)
    this.now = now
    this.state = { ...rest }
    this.visits = { ...visits }
    this.active = [...active]
    this.branches = [...branches]
    this.actions = [...actions]
    this.results = { ...results }
    this.history = [...history]
  }

  emit(entry: OutboxEntry): void {
    this.outbox.push(entry)
    this.changed = true
  }

  touch(): void {
    this.changed = true
  }

  /** Patches one action run; a field set to `undefined` is removed (the state is stored as JSON). */
  updateAction(at: number, patch: { [K in keyof ActionRun]?: ActionRun[K] | undefined }): void {
    const next: Record<string, unknown> = { ...this.actions[at]!, ...patch }
    for (const key of Object.keys(patch)) if (next[key] === undefined) delete next[key]
    this.actions[at] = next as unknown as ActionRun
    this.changed = true
  }

  record(entry: StepRecord): void {
    this.history.push(entry)
    if (this.history.length > HISTORY_LIMIT) this.history.splice(0, this.history.length - HISTORY_LIMIT)
  }

  /** The log writes of this call: none when nothing changed (nothing is stored then). */
  logWrites(identity: LogIdentity): ReadonlyArray<LogWrite> {
    return this.changed && this.log !== undefined ? this.log.writes(identity) : []
  }

  /** The new state; the revision grows only when something changed (and only then does the log move). */
  finish(): ExecutionState {
    const log = this.changed && this.log !== undefined ? this.log.finish() : this.sourceLog
    return {
      ...this.state,
      revision: this.changed ? this.state.revision + 1 : this.state.revision,
      visits: this.visits,
      active: this.active,
      branches: this.branches,
      actions: this.actions,
      results: this.results,
      history: this.history,
      ...(log !== undefined ? { log } : {})
    }
  }
}
