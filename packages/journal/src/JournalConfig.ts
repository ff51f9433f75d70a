import { checkKeyPart } from "@microdcs/keyschema"
import { parseDuration } from "./Duration.js"
import { pathProblem } from "./EventPath.js"

/** Bucket sizes of a counter: coarser buckets, less memory. */
export const resolutions = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const
export type Resolution = keyof typeof resolutions

export interface SearchKeyConfig {
  readonly name: string
  /** Where the value is in the event (`data.tool_id`, `subject`). */
  readonly path: string
}

export interface CounterConfig {
  readonly name: string
  /** The search key it groups by (a name of the journal's `searchKeys`). */
  readonly searchKey: string
  readonly windowMs: number
  readonly resolution: Resolution
  /** Absent: counts entries. Present: sums the number at this path (an entry without one adds nothing). */
  readonly sum?: string | undefined
  /** A condition on the event (the recipe condition language); only entries it holds for count. */
  readonly when?: string | undefined
}

/** One journal of a scope. */
export interface JournalConfig {
  readonly scope: string
  readonly name: string
  /** The CloudEvent types it records. */
  readonly types: ReadonlyArray<string>
  readonly searchKeys: ReadonlyArray<SearchKeyConfig>
  /** Entries older than this (by their reference time) are swept. */
  readonly retentionMs: number
  /** The reference time of an entry: the event's `time`, or when it arrived. */
  readonly reference: "event" | "arrival"
  readonly compression: "none" | "lz4"
  readonly counters: ReadonlyArray<CounterConfig>
}

/** A condition language for counters' `when` (the daemon gives the recipe one); without it, `when` is refused. */
export interface ConditionLanguage {
  /** A predicate on the event, or what is wrong with the text. */
  readonly compile: (text: string) => { readonly predicate: (event: unknown) => boolean } | { readonly problem: string }
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const nameProblem = (what: string, value: unknown): string | undefined => {
  if (typeof value !== "string") return `${what} must be a text`
  if (!/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(value)) {
    return `${what} '${value}' must start with a letter and hold only letters, digits, '_', '.', '-' (at most 64)`
  }
  return undefined
}

const allowed = (what: string, value: Readonly<Record<string, unknown>>, keys: ReadonlyArray<string>): Array<string> =>
  Object.keys(value).filter((k) => !keys.includes(k)).map((k) => `${what}.${k} is not a known field`)

// The parse steps below each add their problems to the one list, in the order an operator reads them.

const parseTypes = (rawTypes: unknown, problems: Array<string>): Array<string> => {
  const types: Array<string> = []
  if (!Array.isArray(rawTypes) || rawTypes.length === 0) problems.push("types must be a non-empty list of CloudEvent types")
  else {
    rawTypes.forEach((t, i) => {
      if (typeof t !== "string" || t.trim() === "") problems.push(`types[${i}] must be a non-empty text`)
      else if (types.includes(t)) problems.push(`types[${i}] '${t}' is listed twice`)
      else types.push(t)
    })
  }
  return types
}

/** The valid search keys, and the name of every search key given (valid or not) for the counters to refer to. */
const parseSearchKeys = (rawKeys: unknown, problems: Array<string>) => {
  const searchKeys: Array<SearchKeyConfig> = []
  const keyNames = new Set<string>()
  if (!Array.isArray(rawKeys)) problems.push("searchKeys must be a list")
  else {
    rawKeys.forEach((k, i) => {
      if (!isObject(k)) return void problems.push(`searchKeys[${i}] must be an object with name and path`)
      problems.push(...allowed(`searchKeys[${i}]`, k, ["name", "path"]))
      const keyName = nameProblem(`searchKeys[${i}].name`, k["name"])
      const path = pathProblem(k["path"])
      if (keyName) problems.push(keyName)
      if (path) problems.push(`searchKeys[${i}].path ${path}`)
      if (typeof k["name"] === "string" && keyNames.has(k["name"])) problems.push(`searchKeys[${i}].name '${k["name"]}' is used twice`)
      else if (!keyName && !path) searchKeys.push({ name: k["name"] as string, path: k["path"] as string })
      if (typeof k["name"] === "string") keyNames.add(k["name"])
    })
  }
  return { searchKeys, keyNames }
}

const parseRetention = (retention: unknown, problems: Array<string>) => {
  let retentionMs = 0
  let reference: JournalConfig["reference"] = "event"
  if (!isObject(retention)) problems.push("retention must be an object with maxAge (e.g. \"7d\") and optionally reference (event or arrival)")
  else {
    problems.push(...allowed("retention", retention, ["maxAge", "reference"]))
    const ms = parseDuration(retention["maxAge"])
    if (ms === undefined) problems.push(`retention.maxAge must be a duration such as 90m, 12h or 7d, got ${JSON.stringify(retention["maxAge"])}`)
    else retentionMs = ms
    const ref = retention["reference"] ?? "event"
    if (ref !== "event" && ref !== "arrival") problems.push(`retention.reference must be event or arrival, got ${JSON.stringify(ref)}`)
    else reference = ref
  }
  return { retentionMs, reference }
}

const counterWindowProblems = (at: string, c: Readonly<Record<string, unknown>>, windowMs: number | undefined, problems: Array<string>) => {
  if (windowMs === undefined) problems.push(`${at}.window must be a duration such as 1h, got ${JSON.stringify(c["window"])}`)
  const resolution = c["resolution"] ?? "minute"
  if (typeof resolution !== "string" || !Object.hasOwn(resolutions, resolution)) {
    problems.push(`${at}.resolution must be minute, hour or day, got ${JSON.stringify(resolution)}`)
  } else if (windowMs !== undefined && windowMs < resolutions[resolution as Resolution]) {
    problems.push(`${at}.window ${String(c["window"])} is shorter than its resolution (${resolution})`)
  }
}

const counterSumAndWhenProblems = (at: string, c: Readonly<Record<string, unknown>>, conditions: ConditionLanguage | undefined, problems: Array<string>) => {
  const sum = c["sum"]
  if (sum !== undefined) {
    const p = pathProblem(sum)
    if (p) problems.push(`${at}.sum ${p}`)
  }
  const when = c["when"]
  if (when !== undefined) {
    if (typeof when !== "string" || when.trim() === "") problems.push(`${at}.when must be a condition text`)
    else if (conditions === undefined) problems.push(`${at}.when: no condition language is configured in this process`)
    else {
      const compiled = conditions.compile(when)
      if ("problem" in compiled) problems.push(`${at}.when: ${compiled.problem}`)
    }
  }
}

interface CounterNames {
  /** The journal's search keys, valid or not. */
  readonly keyNames: ReadonlySet<string>
  /** The counter names seen so far. */
  readonly counterNames: Set<string>
}

/** One counter, or `undefined` when it added problems. */
const parseCounter = (
  c: Readonly<Record<string, unknown>>,
  at: string,
  names: CounterNames,
  conditions: ConditionLanguage | undefined,
  problems: Array<string>
): CounterConfig | undefined => {
  const { keyNames, counterNames } = names
  const before = problems.length
  problems.push(...allowed(at, c, ["name", "searchKey", "window", "resolution", "sum", "when"]))
  const counterName = nameProblem(`${at}.name`, c["name"])
  if (counterName) problems.push(counterName)
  else if (counterNames.has(c["name"] as string)) problems.push(`${at}.name '${c["name"]}' is used twice`)
  if (typeof c["name"] === "string") counterNames.add(c["name"])
  const searchKey = c["searchKey"]
  if (typeof searchKey !== "string" || !keyNames.has(searchKey)) {
    problems.push(`${at}.searchKey must name one of the journal's search keys (${[...keyNames].join(", ") || "none"}), got ${JSON.stringify(searchKey)}`)
  }
  const windowMs = parseDuration(c["window"])
  counterWindowProblems(at, c, windowMs, problems)
  counterSumAndWhenProblems(at, c, conditions, problems)
  if (problems.length !== before) return undefined
  const { sum, when } = c
  return {
    name: c["name"] as string,
    searchKey: searchKey as string,
    windowMs: windowMs!,
    resolution: (c["resolution"] ?? "minute") as Resolution,
    ...(sum === undefined ? {} : { sum: sum as string }),
    ...(when === undefined ? {} : { when: when as string })
  }
}

const parseCounters = (
  rawCounters: unknown,
  keyNames: ReadonlySet<string>,
  conditions: ConditionLanguage | undefined,
  problems: Array<string>
): Array<CounterConfig> => {
  const counters: Array<CounterConfig> = []
  const names: CounterNames = { keyNames, counterNames: new Set<string>() }
  if (!Array.isArray(rawCounters)) problems.push("counters must be a list")
  else {
    rawCounters.forEach((c, i) => {
      const at = `counters[${i}]`
      if (!isObject(c)) return void problems.push(`${at} must be an object`)
      const counter = parseCounter(c, at, names, conditions, problems)
      if (counter !== undefined) counters.push(counter)
    })
  }
  return counters
}

/**
 * The configuration of one journal from its JSON form, with every problem listed (not only the
 * first), so an operator fixes them in one go. Durations are texts such as `1h` or `7d`.
 *
 * ```json
 * { "name": "torque", "types": ["com.example.station.torque.v1"],
 *   "searchKeys": [{ "name": "tool", "path": "data.tool_id" }],
 *   "retention": { "maxAge": "7d", "reference": "event" }, "compression": "lz4",
 *   "counters": [{ "name": "nok_torque_1h", "searchKey": "tool", "window": "1h", "resolution": "minute", "when": "..." }] }
 * ```
 */
export const parseJournalConfig = (
  scope: string,
  input: unknown,
  conditions?: ConditionLanguage
): { readonly config: JournalConfig } | { readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  const scopeError = checkKeyPart("scope", scope)
  if (scopeError) problems.push(`scope: ${scopeError.message}`)
  if (!isObject(input)) return { problems: [...problems, "the configuration must be an object"] }
  problems.push(...allowed("journal", input, ["name", "types", "searchKeys", "retention", "compression", "counters"]))
  const name = input["name"]
  const bad = nameProblem("name", name)
  if (bad) problems.push(bad)
  const types = parseTypes(input["types"], problems)
  const { searchKeys, keyNames } = parseSearchKeys(input["searchKeys"] ?? [], problems)
  const { retentionMs, reference } = parseRetention(input["retention"], problems)
  const compression = input["compression"] ?? "none"
  if (compression !== "none" && compression !== "lz4") problems.push(`compression must be none or lz4, got ${JSON.stringify(compression)}`)
  const counters = parseCounters(input["counters"] ?? [], keyNames, conditions, problems)
  if (problems.length > 0) return { problems }
  return {
    config: { scope, name: name as string, types, searchKeys, retentionMs, reference, compression: compression as JournalConfig["compression"], counters }
  }
}

/** The JSON form of a configuration (what `parseJournalConfig` reads back), as stored and shown. */
export const journalConfigJson = (config: JournalConfig): Record<string, unknown> => ({
  name: config.name,
  types: config.types,
  searchKeys: config.searchKeys,
  retention: { maxAge: config.retentionMs, reference: config.reference },
  compression: config.compression,
  counters: config.counters.map((c) => ({
    name: c.name,
    searchKey: c.searchKey,
    window: c.windowMs,
    resolution: c.resolution,
    ...(c.sum === undefined ? {} : { sum: c.sum }),
    ...(c.when === undefined ? {} : { when: c.when })
  }))
})

/**
 * Problems of a configuration among the scope's others: a counter name is the scope's (recipe
 * conditions name `counter.nok_torque_1h` without the journal), so two journals may not share one.
 */
export const scopeProblems = (config: JournalConfig, others: ReadonlyArray<JournalConfig>): ReadonlyArray<string> =>
  config.counters.flatMap((counter, i) => {
    const owner = others.find((o) => o.name !== config.name && o.counters.some((c) => c.name === counter.name))
    return owner ? [`counters[${i}].name '${counter.name}' is already a counter of journal '${owner.name}' in scope '${config.scope}'`] : []
  })
