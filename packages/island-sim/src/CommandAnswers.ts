import type { EventDataSource } from "./EventData.js"
import { drawDelay, occurs, rememberBounded } from "./Occurrence.js"
import type { CommandRule, Resend, StationScript } from "./StationScript.js"
import { fillTemplate } from "./Templates.js"

/** A push command as the station received it. */
export interface ReceivedCommand {
  /** The scope of the command topic it came on. */
  readonly scope: string
  readonly type: string
  /** The CloudEvent id: `{correlationId}.{attempt}` from an island, the same for a redelivery. */
  readonly id: string
  readonly jobId: string | undefined
  readonly action: string | undefined
  readonly attempt: string | undefined
  readonly correlationId: string | undefined
  readonly parameters: unknown
}

/** A pull event to send: its id and data are fixed when it is planned, so every resend carries the same. */
export interface PlannedEvent {
  readonly type: string
  readonly id: string
  readonly afterMs: number
  readonly data: unknown
}

/** A pull event a command sets off, and how it is sent again until its job ends. */
export interface PlannedTrigger extends PlannedEvent {
  readonly resend: Resend
}

export type Answer =
  | { readonly _tag: "Silent"; readonly rule: number | undefined }
  | {
      readonly _tag: "Reply"
      /** The index of the rule in the script's `commands`; undefined for a command no rule matches. */
      readonly rule: number | undefined
      readonly delayMs: number
      readonly data: unknown
      readonly error: string | undefined
      readonly emit: ReadonlyArray<PlannedTrigger>
    }

/** How many answers are kept for commands that come again with the same id (a redelivery). */
const ANSWERS_REMEMBERED = 10_000

const ruleFor = (script: StationScript, command: ReceivedCommand): number | undefined => {
  const index = script.commands.findIndex((r) => r.type === command.type && (r.action === undefined || r.action === command.action))
  return index < 0 ? undefined : index
}

const planned = (script: StationScript, data: EventDataSource, rule: CommandRule, command: ReceivedCommand): ReadonlyArray<PlannedTrigger> =>
  rule.emit.flatMap((trigger) => {
    const event = script.events.get(trigger.type)
    if (event === undefined) return []
    // Derived from the command's id: a redelivered command sets off the same event, not a second one.
    const id = `${command.id}/${trigger.type}`
    const afterMs = drawDelay(trigger.after)
    return [{ type: trigger.type, id, afterMs, data: data.next(event, trigger.type, command.scope, command.jobId), resend: event.resend }]
  })

const ruleAnswer = (script: StationScript, data: EventDataSource, index: number, ordinal: number, command: ReceivedCommand): Answer => {
  const rule = script.commands[index]!
  if (rule.silent !== undefined && occurs(rule.silent, ordinal)) return { _tag: "Silent", rule: index }
  const error = rule.error !== undefined && occurs(rule.error.when, ordinal) ? rule.error.message : undefined
  const values = {
    jobid: command.jobId,
    action: command.action,
    scope: command.scope,
    type: command.type,
    attempt: command.attempt,
    correlationid: command.correlationId
  }
  return {
    _tag: "Reply",
    rule: index,
    delayMs: drawDelay(rule.delay),
    data: fillTemplate(rule.reply, values),
    error,
    // A station that failed did not do the work: nothing follows from it.
    emit: error === undefined ? planned(script, data, rule, command) : []
  }
}

/**
 * The station's answers, as the script says: the first matching rule's reply, error or silence
 * on this occurrence (counted per rule), and the events it sets off. A command that comes again
 * with the same id (a redelivery) gets the answer it got the first time, counted once.
 */
export const makeAnswers = (script: StationScript, data: EventDataSource) => {
  const counts = new Map<number, number>()
  const given = new Map<string, Answer>()
  return (command: ReceivedCommand): Answer => {
    const before = given.get(command.id)
    if (before !== undefined) return before
    const index = ruleFor(script, command)
    if (index === undefined) {
      const other: Answer =
        script.otherCommands === "silent" ? { _tag: "Silent", rule: undefined } : { _tag: "Reply", rule: undefined, delayMs: 0, data: {}, error: undefined, emit: [] }
      return rememberBounded(given, command.id, other, ANSWERS_REMEMBERED)
    }
    const ordinal = (counts.get(index) ?? 0) + 1
    counts.set(index, ordinal)
    return rememberBounded(given, command.id, ruleAnswer(script, data, index, ordinal, command), ANSWERS_REMEMBERED)
  }
}
