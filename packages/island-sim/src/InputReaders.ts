import type { Delay, Occurrence } from "./StationScript.js"

/**
 * Readers for hand-written JSON input (station scripts, MES request files). Each adds what is
 * wrong to one list, prefixed with where it is, and returns undefined for a value it cannot use,
 * so a caller reads everything and reports every problem at once.
 */
export type Problems = Array<string>

export const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const shown = (value: unknown) => JSON.stringify(value) ?? String(value)

/** Flags every field that is not one of `allowed` (a typo would otherwise be ignored silently). */
export const onlyFields = (problems: Problems, at: string, value: Readonly<Record<string, unknown>>, allowed: ReadonlyArray<string>) => {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) problems.push(`${at}.${key}: unknown field (known: ${allowed.join(", ")})`)
  }
}

export const readObject = (problems: Problems, at: string, value: unknown): Readonly<Record<string, unknown>> | undefined => {
  if (isObject(value)) return value
  problems.push(`${at}: must be an object, got ${shown(value)}`)
  return undefined
}

export const readText = (problems: Problems, at: string, value: unknown): string | undefined => {
  if (typeof value === "string" && value.trim().length > 0) return value
  problems.push(`${at}: must be a non-empty text, got ${shown(value)}`)
  return undefined
}

export const readOptionalText = (problems: Problems, at: string, value: unknown): string | undefined =>
  value === undefined ? undefined : readText(problems, at, value)

export const readInt = (problems: Problems, at: string, value: unknown, min: number): number | undefined => {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= min) return value
  problems.push(`${at}: must be an integer of at least ${min}, got ${shown(value)}`)
  return undefined
}

export const readList = (problems: Problems, at: string, value: unknown): ReadonlyArray<unknown> | undefined => {
  if (Array.isArray(value)) return value
  problems.push(`${at}: must be a list, got ${shown(value)}`)
  return undefined
}

/** Milliseconds: `25`, or `[10, 40]` for a delay drawn from that range each time. */
export const readDelay = (problems: Problems, at: string, value: unknown): Delay | undefined => {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return { minMs: value, maxMs: value }
  const pair = Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0)
  if (pair && value[0] <= value[1]) return { minMs: value[0], maxMs: value[1] }
  problems.push(`${at}: must be milliseconds (an integer of at least 0) or [min, max] with min <= max, got ${shown(value)}`)
  return undefined
}

const OCCURRENCE_HELP = `"always", {"oneIn": N} or {"nth": [n, ...]}`

/** `"always"`, `{"oneIn": N}` (the N-th, 2N-th, ... occurrence) or `{"nth": [1, 3]}` (those occurrences). */
export const readOccurrence = (problems: Problems, at: string, value: unknown): Occurrence | undefined => {
  if (value === "always" || value === true) return { _tag: "always" }
  if (isObject(value) && Object.keys(value).length === 1 && "oneIn" in value) {
    const n = readInt(problems, `${at}.oneIn`, value["oneIn"], 1)
    return n === undefined ? undefined : { _tag: "oneIn", n }
  }
  if (isObject(value) && Object.keys(value).length === 1 && "nth" in value) {
    const list = value["nth"]
    const ok = Array.isArray(list) && list.length > 0 && list.every((n) => typeof n === "number" && Number.isSafeInteger(n) && n >= 1)
    if (ok) return { _tag: "nth", ordinals: list as ReadonlyArray<number> }
    problems.push(`${at}.nth: must be a non-empty list of integers of at least 1, got ${shown(list)}`)
    return undefined
  }
  problems.push(`${at}: must be ${OCCURRENCE_HELP}, got ${shown(value)}`)
  return undefined
}

const PLACEHOLDER = /^\{\{\s*([A-Za-z]+)\s*\}\}$/

/** The name of a whole-string placeholder (`"{{jobid}}"`), else undefined. */
export const placeholderOf = (text: string): string | undefined => PLACEHOLDER.exec(text)?.[1]

/** Flags every `{{name}}` in `value` (at any depth) whose name is not one of `known`. */
export const placeholderProblems = (problems: Problems, at: string, value: unknown, known: ReadonlyArray<string>): void => {
  if (typeof value === "string") {
    const name = placeholderOf(value)
    if (name !== undefined && !known.includes(name)) problems.push(`${at}: unknown placeholder {{${name}}} (known: ${known.join(", ")})`)
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => placeholderProblems(problems, `${at}[${i}]`, item, known))
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) placeholderProblems(problems, `${at}.${key}`, item, known)
  }
}
