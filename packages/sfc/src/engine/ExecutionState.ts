import type { Origin } from "@microdcs/job-state"
import type { Recipe } from "../recipe/Recipe.js"
import type { ExecutionLogState } from "./ExecutionLog.js"
import type { InterventionKind } from "./InterventionInput.js"
import type { CommandEntry } from "./Outbox.js"

/**
 * The execution state of one job: the document in `sfc:state:{jobId}`. Plain JSON
 * data, so it is stored as is and compared structurally in tests.
 */

export type ExecutionStatus = "running" | "paused" | "completed" | "failed" | "aborted" | "stopped"

export const isTerminalStatus = (status: ExecutionStatus): boolean =>
  status === "completed" || status === "failed" || status === "aborted" || status === "stopped"

export type ActionRunState = "pending" | "dispatched" | "waiting" | "completed" | "failed"

/** One action of an active step, in the step's current visit. */
export interface ActionRun {
  readonly action: string
  readonly step: string
  readonly visit: number
  readonly state: ActionRunState
  /** Push commands: the same for every resend of this visit (and attempt of a Retry policy). */
  readonly correlationId?: string
  readonly attempts: number
  /** Sends before an operator's retry: the send budget counts from here (absent: from 0). */
  readonly attemptBase?: number
  /**
   * An action with a Retry policy: the policy's attempt that is open, or that failed while the
   * next one waits (state `pending`, its deadline the next send); absent: the first.
   */
  readonly retryAttempt?: number
  /** Epoch ms; absent when the action is settled, is a pulse, or the job is paused. */
  readonly deadline?: number
  /** While paused: what was left of the deadline. */
  readonly remainingMs?: number
  /** Pull events: when the wait started (the order in which waiting jobs get events). */
  readonly waitSince?: number
  readonly result?: unknown
  readonly error?: string
  /** Its open node in the execution log: the sequence number and when it opened. */
  readonly logNode?: { readonly seq: number; readonly at: number }
}

/** Where an active step sits: at top level, or on a path of a branch. */
export interface ActiveStep {
  readonly step: string
  readonly visit: number
  readonly enteredAt: number
  readonly branch?: { readonly name: string; readonly path: number }
  /** The sequence number of this visit's node in the execution log. */
  readonly logSeq?: number
  /**
   * Entered by leaving another step for a target outside its transitions (an action's OnError):
   * that step's results, which this step's transitions read before its own (LeaveTo.ts).
   */
  readonly carried?: ReadonlyArray<{ readonly action: string; readonly result: unknown }>
  /** v1.1.0, the step's MaxDuration: when its time limit runs out (epoch ms); absent while paused. */
  readonly limitAt?: number
  /** While paused: what was left of the step's time limit. */
  readonly limitLeftMs?: number
  /**
   * v1.1.0: the step's actions are done and, when its transitions were last evaluated (at this
   * time), none held: the step waits until something they read changes (Waiting.ts).
   */
  readonly checkedAt?: number
  /** v1.1.0: time this activation spent paused (a step's `T` counts running time); absent when none. */
  readonly heldMs?: number
}

/** A branch being executed: which of its paths are still running. */
export interface BranchRun {
  readonly name: string
  readonly enteredAt: number
  readonly runningPaths: ReadonlyArray<number>
  /** A simultaneous branch's node in the execution log: its visit and the child execution of each path. */
  readonly logNode?: { readonly seq: number; readonly visit: number; readonly children: ReadonlyArray<string> }
  /**
   * v1.1.0: every path ended and, when the branch's transitions were last evaluated (at this
   * time), none held: the branch waits, with no path running, until one does.
   */
  readonly checkedAt?: number
}

/**
 * v1.1.0: a command of a timed or stored qualifier (QualifierSchema.ts) whose story is not over:
 * waiting for its `Delay` (`delay`), or sent and waiting for its stop (`on`).
 */
export interface TimedCommand {
  readonly action: string
  /** The visit of the action's step that started it (its correlation ids are of this visit). */
  readonly visit: number
  readonly phase: "delay" | "on"
  /** When the delay ends or the limit runs out (epoch ms); absent for a stored command without limit, and while paused. */
  readonly at?: number
  /** While paused: what was left until `at`. */
  readonly leftMs?: number
}

/** One entry of the step history (bounded; the newest are kept). */
export interface StepRecord {
  readonly step: string
  readonly visit: number
  readonly enteredAt: number
  readonly leftAt?: number
}

/** One operator intervention, as the state keeps it (bounded; the newest are kept): who, why, when. */
export interface InterventionRecord {
  readonly at: number
  readonly intervention: InterventionKind
  /** What it was about, as its log node names it: the step, `Source -> Target`, the action. */
  readonly name: string
  readonly by: Origin
  readonly reason: string
}

export interface ExecutionState {
  readonly jobId: string
  readonly scope: string
  readonly workMasterId: string
  /** Snapshot taken at start: a work master changed mid-run does not affect the job. */
  readonly recipe: Recipe
  /**
   * The digest the runtime stored the snapshot under (`sfc:recipe:{digest}`, immutable): the
   * stored document then names the digest instead of carrying the recipe. Absent in states
   * written before, which carry the recipe itself.
   */
  readonly recipeDigest?: string
  readonly status: ExecutionStatus
  /**
   * The key each action that names a correlation key expects (action name → value), fixed at
   * start from the job id or the job order (see `CorrelationKeys.ts`). Absent when none does.
   */
  readonly correlationKeys?: Readonly<Record<string, string>>
  /** Grows with every change of this document (the core's own version, independent of Valkey's). */
  readonly revision: number
  readonly startedAt: number
  readonly endedAt?: number
  readonly pausedAt?: number
  readonly error?: string
  readonly maxAttempts: number
  readonly visits: Readonly<Record<string, number>>
  readonly active: ReadonlyArray<ActiveStep>
  readonly branches: ReadonlyArray<BranchRun>
  readonly actions: ReadonlyArray<ActionRun>
  /**
   * While paused: the commands whose outbox entries reached the handler during the pause and
   * were not sent; Resume sends them (see `HeldCommands.ts`). Absent when there are none.
   */
  readonly heldCommands?: ReadonlyArray<CommandEntry>
  /** Latest result per action name: the data of the job response. */
  readonly results: Readonly<Record<string, unknown>>
  readonly history: ReadonlyArray<StepRecord>
  /** The operator's interventions (skip, force, set result, retry), oldest first; absent until the first. */
  readonly interventions?: ReadonlyArray<InterventionRecord>
  /**
   * The execution log's ids and sequence numbers, kept here so they are the
   * same on every engine instance and after a restart. Absent in states written before the log
   * (or with the log off): the runtime gives one an execution id on its first touch.
   */
  readonly log?: ExecutionLogState
  /** v1.1.0, the recipe's MaxJobDuration: when the job's time limit runs out (epoch ms); absent while paused. */
  readonly jobLimitAt?: number
  /** While paused: what was left of the job's time limit. */
  readonly jobLimitLeftMs?: number
  /**
   * v1.1.0: the length of the last activation (ms, running time) of each step whose `T` a
   * condition reads; only those steps, so the document stays small. Absent when none.
   */
  readonly stepTimes?: Readonly<Record<string, number>>
  /**
   * v1.1.0: the job order as the MES sent it, cut down to the fields the recipe's conditions
   * read (`order.Priority`). Absent when they read none.
   */
  readonly order?: unknown
  /** v1.1.0: delayed commands not yet sent and sent commands not yet stopped (TimedCommands.ts); absent when none. */
  readonly timed?: ReadonlyArray<TimedCommand>
  /** v1.1.0: how often a waiting step's counters are read again, when not `COUNTER_RECHECK_MS`. */
  readonly counterRecheckMs?: number
  /**
   * v1.1.0: a sub-recipe's child execution: the parent job, the correlation id its end answers, and
   * the parent's execution in the log. A child moves no job order and writes no job response.
   */
  readonly parent?: SubRecipeParent
  /**
   * v1.1.0: the job ids of the sub-recipe children this execution started (recorded in the write
   * that asks for each), so removing the job removes them too. Absent when none.
   */
  readonly children?: ReadonlyArray<string>
}

/** Where a child execution's end goes (SubRecipes.ts). */
export interface SubRecipeParent {
  readonly jobId: string
  readonly correlationId: string
  readonly action: string
  /** The job whose job order the tree runs under: gates the child's commands, as the parent's. */
  readonly rootJobId: string
  /** The parent's action node in the execution log: the child's execution names it as its parent. */
  readonly log?: { readonly executionId: string; readonly seq: number }
}

/** How many step records a state keeps, so the document stays bounded however long a loop runs. */
export const HISTORY_LIMIT = 100

/** How many intervention records a state keeps (the log keeps every one). */
export const INTERVENTION_LIMIT = 100
