/**
 * A station script, decoded and checked (see `decodeStationScript`): which scopes the station
 * serves, how it answers each push command, and which pull events it emits, when and with what.
 */
export interface StationScript {
  /** The CloudEvent `source` of its replies and events. */
  readonly source: string
  /** The scopes it serves: it subscribes to these scopes' command topics and no other. */
  readonly scopes: ReadonlyArray<string>
  /** What it does with a command no rule matches: an empty reply, or nothing. */
  readonly otherCommands: "reply" | "silent"
  /** The first rule whose type (and action, when it names one) matches answers a command. */
  readonly commands: ReadonlyArray<CommandRule>
  /** The pull events it knows, by CloudEvent type. */
  readonly events: ReadonlyMap<string, EventScript>
  readonly schedule: ReadonlyArray<ScheduledEvent>
}

/** Milliseconds, drawn evenly from `minMs` to `maxMs` each time (equal for a fixed delay). */
export interface Delay {
  readonly minMs: number
  readonly maxMs: number
}

/**
 * Which occurrences of something count, numbered from 1 per command rule: every one, every n-th
 * (`oneIn`), or the listed ones (`nth`). Deterministic, so a script gives the same run twice.
 */
export type Occurrence =
  | { readonly _tag: "always" }
  | { readonly _tag: "oneIn"; readonly n: number }
  | { readonly _tag: "nth"; readonly ordinals: ReadonlyArray<number> }

export interface CommandRule {
  /** The command's CloudEvent type: the recipe action's TypeId. */
  readonly type: string
  /** The recipe action's name (the `action` extension); any action when undefined. */
  readonly action: string | undefined
  /** The reply's data, placeholders filled in per command. */
  readonly reply: unknown
  readonly delay: Delay
  /** An error reply instead of the data, on these occurrences. */
  readonly error: { readonly message: string; readonly when: Occurrence } | undefined
  /** No reply at all on these occurrences (the island times out and sends the command again). */
  readonly silent: Occurrence | undefined
  /** Pull events this command sets off for its job, each after its delay. */
  readonly emit: ReadonlyArray<TriggeredEvent>
}

export interface TriggeredEvent {
  readonly type: string
  readonly after: Delay
}

/** How a triggered event is sent again with the same id, until its job ends or `forMs` has passed. */
export interface Resend {
  /** 0: sent once. */
  readonly everyMs: number
  readonly forMs: number
}

export interface EventScript {
  /** The data, placeholders filled in, unless the sequence or the variant applies. */
  readonly data: unknown
  /** The data of a job's first emissions of this event, in order. */
  readonly sequence: ReadonlyArray<unknown>
  /** Every `every`-th emission of this event (counted over all jobs) carries `data` instead. */
  readonly oneIn: { readonly every: number; readonly data: unknown } | undefined
  readonly resend: Resend
}

export interface ScheduledEvent {
  readonly scope: string
  readonly type: string
  readonly everyMs: number
  /** Names the job; without it the island gives the event to the job that has waited longest for its type. */
  readonly jobId: string | undefined
}
