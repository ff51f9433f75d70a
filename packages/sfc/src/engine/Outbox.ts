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
}

/** Move the job order with an internal trigger of the shared state machine. */
export interface JobOrderEntry {
  readonly type: "joborder"
  readonly jobId: string
  readonly trigger: "Run" | "Complete" | "Abort"
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

export type OutboxEntry = CommandEntry | JobOrderEntry | JobResponseEntry
