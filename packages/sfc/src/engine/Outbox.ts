/**
 * What the core asks the world to do. The runtime appends these to
 * `sfc:work:{scope}` inside the same CAS that stores the state, and handlers carry them out
 * idempotently.
 */

/** Send (or resend) a push command to the station. */
export interface CommandEntry {
  readonly type: "command"
  readonly jobId: string
  readonly action: string
  readonly correlationId: string
  /** The CloudEvent type: the action's TypeId. */
  readonly typeId: string
  readonly parameters: Readonly<Record<string, unknown>>
  /** The CloudEvent subject: the scope. */
  readonly subject: string
  readonly attempt: number
  /**
   * The stop of a stored or time-limited action (its `Stop`): it ends an effect the equipment
   * keeps up, so it goes out however the job ended, the MES's Stop or Abort included.
   */
  readonly stop?: true
}

/** Move the job order with an internal trigger of the shared state machine. */
export interface JobOrderEntry {
  readonly type: "joborder"
  readonly jobId: string
  readonly trigger: "Run" | "Complete" | "Abort"
  /** The Abort of a failed job: why it failed, kept as the job order's comment (what a search by error text finds). */
  readonly reason?: string
}

/** Store the job response of a finished job (id `{jobId}-response`). */
export interface JobResponseEntry {
  readonly type: "jobresponse"
  readonly jobId: string
  readonly responseId: string
  readonly state: "Ended_Completed" | "Aborted"
  readonly startTime: number
  readonly endTime: number
  readonly data: Readonly<Record<string, unknown>>
  readonly error?: string
}

/**
 * Start a sub-recipe (v1.1.0, `Interaction: "recipe"`): create the child execution `childJobId`
 * in the parent's scope, create-only, so a redelivered entry starts it once. The child has no job
 * order of its own; its end comes back to the parent as an event with `correlationId`.
 */
export interface SubRecipeEntry {
  readonly type: "subrecipe"
  /** The parent's job id. */
  readonly jobId: string
  readonly action: string
  readonly childJobId: string
  readonly correlationId: string
  /** The job whose job order the whole tree runs under (the parent's, or its own root's). */
  readonly rootJobId: string
  readonly workMasterId: string
  /** The digest the child's recipe must have; absent: the work master's current recipe. */
  readonly digest?: string
  readonly parameters: Readonly<Record<string, unknown>>
  /** The child's execution id in the log (derived from the parent's); absent when the parent has no log. */
  readonly childExecutionId?: string
  /** The parent's action node, which the child's execution names as its parent. */
  readonly logParent?: { readonly executionId: string; readonly seq: number }
}

/**
 * Abort (or stop) a child execution: its parent ended, left its step, or stopped waiting for it;
 * or pause / resume it with its parent (the child then follows its parent's state).
 */
export interface SubRecipeEndEntry {
  readonly type: "subrecipe-end"
  /** The parent's job id. */
  readonly jobId: string
  readonly childJobId: string
  readonly how: "abort" | "stop" | "pause" | "resume"
  readonly reason: string
}

/**
 * A child execution ended (written by the child instead of job order moves and a job response):
 * the runtime hands it to the parent as an event with `correlationId`.
 */
export interface SubRecipeDoneEntry {
  readonly type: "subrecipe-done"
  /** The child's job id. */
  readonly jobId: string
  readonly parentJobId: string
  readonly correlationId: string
  /** The child's work master (named in the parent's error). */
  readonly workMasterId: string
  readonly status: "completed" | "stopped" | "failed" | "aborted"
  readonly data: Readonly<Record<string, unknown>>
  readonly error?: string
}

export type OutboxEntry = CommandEntry | JobOrderEntry | JobResponseEntry | SubRecipeEntry | SubRecipeEndEntry | SubRecipeDoneEntry
