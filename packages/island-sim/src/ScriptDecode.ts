import { readFile } from "node:fs/promises"
import { Effect, Result } from "effect"
import { validateLevel } from "@microdcs/cloudevents-mqtt"
import {
  isObject,
  onlyFields,
  placeholderProblems,
  type Problems,
  readDelay,
  readInt,
  readList,
  readObject,
  readOccurrence,
  readOptionalText,
  readText
} from "./InputReaders.js"
import { ScriptInvalid } from "./Errors.js"
import type { CommandRule, EventScript, Resend, ScheduledEvent, StationScript, TriggeredEvent } from "./StationScript.js"
import { EVENT_PLACEHOLDERS, REPLY_PLACEHOLDERS } from "./Templates.js"

export const DEFAULT_STATION_SOURCE = "urn:microdcs:island-sim:station"
/** A triggered event is sent again every 250 ms for up to 2 minutes unless its job ends first. */
export const DEFAULT_RESEND: Resend = { everyMs: 250, forMs: 120_000 }
/** The shortest period of a resend or a schedule: a script cannot make the station flood the broker. */
const MIN_PERIOD_MS = 10

const readScopes = (problems: Problems, value: unknown): ReadonlyArray<string> => {
  const list = readList(problems, "scopes", value)
  if (list === undefined) return []
  if (list.length === 0) problems.push("scopes: must name at least one scope")
  const scopes: Array<string> = []
  list.forEach((scope, i) => {
    const text = readText(problems, `scopes[${i}]`, scope)
    if (text === undefined) return
    const level = validateLevel("scope", text)
    if (Result.isFailure(level)) problems.push(`scopes[${i}]: ${level.failure.message}`)
    else if (scopes.includes(text)) problems.push(`scopes[${i}]: '${text}' is listed twice`)
    else scopes.push(text)
  })
  return scopes
}

const readResend = (problems: Problems, at: string, value: unknown, fallback: Resend): Resend => {
  if (value === undefined) return fallback
  const object = readObject(problems, at, value)
  if (object === undefined) return fallback
  onlyFields(problems, at, object, ["everyMs", "forMs"])
  const everyMs = object["everyMs"] === undefined ? fallback.everyMs : readInt(problems, `${at}.everyMs`, object["everyMs"], 0)
  if (everyMs !== undefined && everyMs > 0 && everyMs < MIN_PERIOD_MS) problems.push(`${at}.everyMs: must be 0 (no resend) or at least ${MIN_PERIOD_MS}`)
  const forMs = object["forMs"] === undefined ? fallback.forMs : readInt(problems, `${at}.forMs`, object["forMs"], 0)
  return { everyMs: everyMs ?? fallback.everyMs, forMs: forMs ?? fallback.forMs }
}

const readTriggers = (problems: Problems, at: string, value: unknown, events: ReadonlySet<string>): ReadonlyArray<TriggeredEvent> => {
  if (value === undefined) return []
  const triggers: Array<TriggeredEvent> = []
  readList(problems, at, value)?.forEach((item, i) => {
    const object = readObject(problems, `${at}[${i}]`, item)
    if (object === undefined) return
    onlyFields(problems, `${at}[${i}]`, object, ["type", "afterMs"])
    const type = readText(problems, `${at}[${i}].type`, object["type"])
    const after = object["afterMs"] === undefined ? { minMs: 0, maxMs: 0 } : readDelay(problems, `${at}[${i}].afterMs`, object["afterMs"])
    if (type !== undefined && !events.has(type)) problems.push(`${at}[${i}].type: '${type}' is not one of the script's events`)
    if (type !== undefined && triggers.some((t) => t.type === type)) problems.push(`${at}[${i}].type: '${type}' is emitted twice by one command`)
    if (type !== undefined && after !== undefined) triggers.push({ type, after })
  })
  return triggers
}

const readError = (problems: Problems, at: string, value: unknown): CommandRule["error"] => {
  if (value === undefined) return undefined
  const object = readObject(problems, at, value)
  if (object === undefined) return undefined
  onlyFields(problems, at, object, ["message", "when"])
  const message = readText(problems, `${at}.message`, object["message"])
  const when = object["when"] === undefined ? { _tag: "always" as const } : readOccurrence(problems, `${at}.when`, object["when"])
  return message === undefined || when === undefined ? undefined : { message, when }
}

const COMMAND_FIELDS = ["type", "action", "reply", "delayMs", "error", "silent", "emit", "description"]

const readCommand = (problems: Problems, at: string, value: unknown, events: ReadonlySet<string>): CommandRule | undefined => {
  const object = readObject(problems, at, value)
  if (object === undefined) return undefined
  onlyFields(problems, at, object, COMMAND_FIELDS)
  const type = readText(problems, `${at}.type`, object["type"])
  const action = readOptionalText(problems, `${at}.action`, object["action"])
  placeholderProblems(problems, `${at}.reply`, object["reply"], REPLY_PLACEHOLDERS)
  const delay = object["delayMs"] === undefined ? { minMs: 0, maxMs: 0 } : readDelay(problems, `${at}.delayMs`, object["delayMs"])
  const error = readError(problems, `${at}.error`, object["error"])
  const silent = object["silent"] === undefined ? undefined : readOccurrence(problems, `${at}.silent`, object["silent"])
  const emit = readTriggers(problems, `${at}.emit`, object["emit"], events)
  if (type === undefined || delay === undefined) return undefined
  return { type, action, reply: object["reply"] ?? {}, delay, error, silent, emit }
}

/** A rule an earlier one always takes the commands of can never answer: most likely a mistake in the order. */
const shadowProblems = (problems: Problems, rules: ReadonlyArray<CommandRule | undefined>) =>
  rules.forEach((rule, i) => {
    if (rule === undefined) return
    const earlier = rules.slice(0, i).findIndex((e) => e !== undefined && e.type === rule.type && (e.action === undefined || e.action === rule.action))
    if (earlier >= 0) problems.push(`commands[${i}]: never used, commands[${earlier}] takes every command it would (put the more specific rule first)`)
  })

const readCommands = (problems: Problems, value: unknown, events: ReadonlySet<string>): ReadonlyArray<CommandRule> => {
  if (value === undefined) return []
  const rules = (readList(problems, "commands", value) ?? []).map((item, i) => readCommand(problems, `commands[${i}]`, item, events))
  shadowProblems(problems, rules)
  return rules.filter((rule) => rule !== undefined)
}

const readEvent = (problems: Problems, at: string, value: unknown, resend: Resend): EventScript | undefined => {
  const object = readObject(problems, at, value)
  if (object === undefined) return undefined
  onlyFields(problems, at, object, ["data", "sequence", "oneIn", "resend", "description"])
  placeholderProblems(problems, at, { data: object["data"], sequence: object["sequence"] }, EVENT_PLACEHOLDERS)
  const sequence = object["sequence"] === undefined ? [] : (readList(problems, `${at}.sequence`, object["sequence"]) ?? [])
  let oneIn: EventScript["oneIn"]
  if (object["oneIn"] !== undefined) {
    const variant = readObject(problems, `${at}.oneIn`, object["oneIn"])
    if (variant !== undefined) {
      onlyFields(problems, `${at}.oneIn`, variant, ["every", "data"])
      placeholderProblems(problems, `${at}.oneIn.data`, variant["data"], EVENT_PLACEHOLDERS)
      const every = readInt(problems, `${at}.oneIn.every`, variant["every"], 1)
      if (every !== undefined) oneIn = { every, data: variant["data"] ?? {} }
    }
  }
  return { data: object["data"] ?? {}, sequence, oneIn, resend: readResend(problems, `${at}.resend`, object["resend"], resend) }
}

const readEvents = (problems: Problems, value: unknown, resend: Resend): ReadonlyMap<string, EventScript> => {
  const events = new Map<string, EventScript>()
  if (value === undefined) return events
  const object = readObject(problems, "events", value)
  for (const [type, item] of Object.entries(object ?? {})) {
    const event = readEvent(problems, `events.${type}`, item, resend)
    if (event !== undefined) events.set(type, event)
  }
  return events
}

const readScheduled = (problems: Problems, at: string, value: unknown, scopes: ReadonlyArray<string>, events: ReadonlySet<string>): ScheduledEvent | undefined => {
  const object = readObject(problems, at, value)
  if (object === undefined) return undefined
  onlyFields(problems, at, object, ["scope", "type", "everyMs", "jobid", "description"])
  const scope = readText(problems, `${at}.scope`, object["scope"])
  if (scope !== undefined && !scopes.includes(scope)) problems.push(`${at}.scope: '${scope}' is not one of the script's scopes`)
  const type = readText(problems, `${at}.type`, object["type"])
  if (type !== undefined && !events.has(type)) problems.push(`${at}.type: '${type}' is not one of the script's events`)
  const everyMs = readInt(problems, `${at}.everyMs`, object["everyMs"], MIN_PERIOD_MS)
  const jobId = readOptionalText(problems, `${at}.jobid`, object["jobid"])
  return scope === undefined || type === undefined || everyMs === undefined ? undefined : { scope, type, everyMs, jobId }
}

const readSchedule = (problems: Problems, value: unknown, scopes: ReadonlyArray<string>, events: ReadonlySet<string>): ReadonlyArray<ScheduledEvent> =>
  value === undefined
    ? []
    : (readList(problems, "schedule", value) ?? []).flatMap((item, i) => readScheduled(problems, `schedule[${i}]`, item, scopes, events) ?? [])

const TOP_FIELDS = ["source", "scopes", "otherCommands", "resend", "commands", "events", "schedule", "description"]

const readScript = (problems: Problems, object: Readonly<Record<string, unknown>>): StationScript => {
  onlyFields(problems, "script", object, TOP_FIELDS)
  const source = readOptionalText(problems, "source", object["source"]) ?? DEFAULT_STATION_SOURCE
  const scopes = readScopes(problems, object["scopes"])
  const other = object["otherCommands"] ?? "reply"
  if (other !== "reply" && other !== "silent") problems.push(`otherCommands: must be "reply" or "silent", got ${JSON.stringify(other)}`)
  const resend = readResend(problems, "resend", object["resend"], DEFAULT_RESEND)
  const events = readEvents(problems, object["events"], resend)
  const eventTypes = new Set(isObject(object["events"]) ? Object.keys(object["events"]) : [])
  const commands = readCommands(problems, object["commands"], eventTypes)
  const schedule = readSchedule(problems, object["schedule"], scopes, eventTypes)
  return { source, scopes, otherCommands: other === "silent" ? "silent" : "reply", commands, events, schedule }
}

/** Checks a station script (the parsed JSON): the script, or every problem found. */
export const decodeStationScript = (input: unknown, file?: string): Result.Result<StationScript, ScriptInvalid> => {
  const problems: Problems = []
  if (!isObject(input)) return Result.fail(new ScriptInvalid({ file, problems: [`script: must be a JSON object, got ${JSON.stringify(input)}`] }))
  const script = readScript(problems, input)
  return problems.length === 0 ? Result.succeed(script) : Result.fail(new ScriptInvalid({ file, problems }))
}

/** Reads and checks a station script file (JSON). */
export const readStationScript = (file: string): Effect.Effect<StationScript, ScriptInvalid> =>
  Effect.tryPromise({
    try: async () => JSON.parse(await readFile(file, "utf8")) as unknown,
    catch: (error) => new ScriptInvalid({ file, problems: [`cannot be read as JSON: ${error instanceof Error ? error.message : String(error)}`] })
  }).pipe(Effect.flatMap((input) => Effect.fromResult(decodeStationScript(input, file))))
