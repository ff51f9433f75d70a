import { checkKeyPart } from "@microdcs/keyschema"

/**
 * What a job order search asks for (`JobOrderSearch`). Every field is optional; the ones given
 * must all hold. Times are epoch milliseconds, ranges inclusive.
 */
export interface JobOrderSearchFilter {
  /** The scopes to search; absent = every registered scope. */
  readonly scopes?: ReadonlyArray<string> | undefined
  /** Job order ids starting with this text. */
  readonly idPrefix?: string | undefined
  /** Normalized job state names (`Running`, `AllowedToStart_Ready`, `Aborted`): any of them. */
  readonly states?: ReadonlyArray<string> | undefined
  /** The first work master the job order references. */
  readonly workMaster?: string | undefined
  readonly createdFrom?: number | undefined
  readonly createdTo?: number | undefined
  /** When the job order became Ended or Aborted. */
  readonly endedFrom?: number | undefined
  readonly endedTo?: number | undefined
  readonly priorityMin?: number | undefined
  readonly priorityMax?: number | undefined
  /**
   * Text in the reason an Aborted job order carries (its last comment): implies state Aborted.
   * Case-blind for ASCII letters only (`A`-`Z`), as the server's Lua compares; other letters
   * match as written (`ÜBERLAST` finds `ÜBERLAST`, not `überlast`).
   */
  readonly errorText?: string | undefined
}

export interface JobOrderSearchOptions {
  /** The `next` of the page before (opaque). */
  readonly after?: string | undefined
  /** Page size, 1 to {@link MAX_SEARCH_LIMIT}; default 50. */
  readonly limit?: number | undefined
}

export const MAX_SEARCH_LIMIT = 1000
export const DEFAULT_SEARCH_LIMIT = 50

/** The normalized job state names (as `@microdcs/job-state` writes them; the store does not depend on it). */
export const searchableStates: ReadonlyArray<string> = [
  "InitialState",
  "NotAllowedToStart_Waiting", "NotAllowedToStart_Ready", "NotAllowedToStart_Loaded",
  "AllowedToStart_Waiting", "AllowedToStart_Ready", "AllowedToStart_Loaded",
  "Running",
  "Interrupted_Held", "Interrupted_Suspended",
  "Ended_Completed", "Ended_Closed",
  "Aborted",
  "EndState"
]

const MAX_TIME_MS = 9_999_999_999_999
const MAX_TEXT = 500

const timeProblem = (name: string, value: unknown): string | undefined =>
  value === undefined || (typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= MAX_TIME_MS)
    ? undefined
    : `${name} must be a time in epoch milliseconds (0 to ${MAX_TIME_MS}), got ${JSON.stringify(value)}`

const orderProblem = (from: string, to: string, a: unknown, b: unknown): string | undefined =>
  typeof a === "number" && typeof b === "number" && a > b ? `${from} (${a}) is after ${to} (${b})` : undefined

const textProblem = (name: string, value: unknown, allowEmpty = false): string | undefined => {
  if (value === undefined) return undefined
  if (typeof value !== "string") return `${name} must be text`
  if (!allowEmpty && value.trim() === "") return `${name} is empty`
  if (value.length > MAX_TEXT) return `${name} is ${value.length} characters long, at most ${MAX_TEXT}`
  if (!value.isWellFormed()) return `${name} is not well-formed UTF-8`
  return undefined
}

const listProblems = (name: string, value: unknown, each: (item: string) => string | undefined): ReadonlyArray<string> => {
  if (value === undefined) return []
  if (!Array.isArray(value)) return [`${name} must be a list`]
  if (value.length === 0) return [`${name} is an empty list`]
  return value.flatMap((item: unknown) => {
    if (typeof item !== "string") return [`${name} holds ${JSON.stringify(item)}, not text`]
    const problem = each(item)
    return problem === undefined ? [] : [problem]
  })
}

const priorityProblem = (name: string, value: unknown): string | undefined =>
  value === undefined || (typeof value === "number" && Number.isFinite(value) && Math.abs(value) <= 1e9)
    ? undefined
    : `${name} must be a number between -1e9 and 1e9, got ${JSON.stringify(value)}`

/** Every problem of a filter (empty when it may be searched). */
export const searchFilterProblems = (filter: JobOrderSearchFilter): ReadonlyArray<string> => {
  const f = filter as Record<keyof JobOrderSearchFilter, unknown>
  const problems: Array<string | undefined> = [
    ...listProblems("scopes", f.scopes, (scope) => checkKeyPart("scope", scope)?.message),
    ...listProblems("states", f.states, (state) =>
      searchableStates.includes(state) ? undefined : `state '${state}' is not a job state (one of ${searchableStates.join(", ")})`
    ),
    textProblem("idPrefix", f.idPrefix),
    textProblem("workMaster", f.workMaster),
    textProblem("errorText", f.errorText),
    timeProblem("createdFrom", f.createdFrom),
    timeProblem("createdTo", f.createdTo),
    timeProblem("endedFrom", f.endedFrom),
    timeProblem("endedTo", f.endedTo),
    orderProblem("createdFrom", "createdTo", f.createdFrom, f.createdTo),
    orderProblem("endedFrom", "endedTo", f.endedFrom, f.endedTo),
    priorityProblem("priorityMin", f.priorityMin),
    priorityProblem("priorityMax", f.priorityMax),
    orderProblem("priorityMin", "priorityMax", f.priorityMin, f.priorityMax)
  ]
  return problems.filter((p): p is string => p !== undefined)
}

/** Every problem of the paging options, besides the cursor's (checked when it is read). */
export const searchOptionsProblems = (options: JobOrderSearchOptions): ReadonlyArray<string> => {
  const { limit, after } = options as { limit?: unknown; after?: unknown }
  const problems: Array<string> = []
  if (limit !== undefined && !(typeof limit === "number" && Number.isInteger(limit) && limit >= 1 && limit <= MAX_SEARCH_LIMIT)) {
    problems.push(`limit must be a whole number from 1 to ${MAX_SEARCH_LIMIT}, got ${JSON.stringify(limit)}`)
  }
  if (after !== undefined && typeof after !== "string") problems.push("after must be the text of a page's next cursor")
  return problems
}

/**
 * Lowercases ASCII letters only, exactly as the search script's `string.lower` does the stored
 * reason: the two sides must agree, and JS `toLowerCase` would also lower `Ü`, which Lua leaves.
 */
export const asciiLower = (text: string): string => text.replace(/[A-Z]+/g, (m) => m.toLowerCase())

/** The filter's fields in a fixed order, so two pages of one search can be told to ask the same. */
export const filterFingerprint = (filter: JobOrderSearchFilter): string =>
  JSON.stringify([
    filter.scopes === undefined ? null : [...new Set(filter.scopes)].sort(),
    filter.idPrefix ?? null,
    filter.states === undefined ? null : [...new Set(filter.states)].sort(),
    filter.workMaster ?? null,
    filter.createdFrom ?? null,
    filter.createdTo ?? null,
    filter.endedFrom ?? null,
    filter.endedTo ?? null,
    filter.priorityMin ?? null,
    filter.priorityMax ?? null,
    filter.errorText === undefined ? null : asciiLower(filter.errorText)
  ])

/** ISO 8601 with a date (and maybe a time and zone), as `Date.parse` reads it. */
const isoTime = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/

/**
 * A search time given as text, ISO 8601 (`2026-03-01T08:00:00Z`, a date alone is midnight UTC)
 * or epoch milliseconds, as the daemon's query and the admin CLI take it; a string is its problem.
 */
export const searchTimeOf = (name: string, text: string): number | string => {
  const ms = /^\d+$/.test(text) ? Number(text) : isoTime.test(text) ? Date.parse(text) : Number.NaN
  return Number.isSafeInteger(ms) && ms >= 0 ? ms : `${name} must be ISO 8601 (2026-03-01T08:00:00Z) or epoch milliseconds, got '${text}'`
}
