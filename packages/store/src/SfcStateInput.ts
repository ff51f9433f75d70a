import { Effect } from "effect"
import type { SfcEntryPairs } from "@microdcs/lua-scripts"
import { InvalidInput } from "./Errors.js"

/**
 * Input checks of the SFC state CAS that need no key schema: versions, numbers, entries and the
 * waits lists. Everything here runs before anything is sent, so bad input writes nothing. They
 * are plain functions returning the problem (or the checked value), because the CAS is the
 * engine's hot path: one Effect per write, not one per check.
 */

/** More field/value pairs than this in one entry is a bug in the engine, and Lua's unpack limit is near. */
export const MAX_ENTRY_FIELDS = 1000

export interface WaitJoin {
  readonly typeId: string
  /** Wait start, epoch ms; kept when the job already waits in that set. */
  readonly since: number
}

const problem = (field: string, message: string) => new InvalidInput({ field, message })

/** Lifts a plain check into the error channel. */
const lift = <A>(checked: A | InvalidInput): Effect.Effect<A, InvalidInput> =>
  checked instanceof InvalidInput ? Effect.fail(checked) : Effect.succeed(checked)

/** A CAS always compares: `0` creates, `n > 0` must match. There is no unconditional write. */
export const casVersionProblem = (expected: number): InvalidInput | undefined =>
  Number.isSafeInteger(expected) && expected >= 0
    ? undefined
    : problem("expectedVersion", "expectedVersion must be 0 (create only) or a positive integer")

export const textProblem = (field: string, value: unknown): InvalidInput | undefined => {
  if (typeof value !== "string" || value.length === 0) return problem(field, `${field} must be a non-empty string`)
  if (!value.isWellFormed()) return problem(field, `${field} is not well-formed UTF-8`)
  return undefined
}

/** Epoch-ms values (deadlines, wait starts, `now`) become zset scores: finite numbers only. */
export const timeProblem = (field: string, value: unknown): InvalidInput | undefined =>
  typeof value === "number" && Number.isFinite(value) ? undefined : problem(field, `${field} must be a finite number (epoch ms)`)

export const checkTime = (field: string, value: unknown): Effect.Effect<void, InvalidInput> => {
  const found = timeProblem(field, value)
  return found ? Effect.fail(found) : Effect.void
}

/**
 * Turns the entries into XADD field/value pairs. Each entry needs a non-empty `type`; field names
 * are non-empty, values are strings; all entries together stay under the document size limit.
 */
export const entriesChecked = (
  entries: ReadonlyArray<Readonly<Record<string, string>>>,
  maxBytes: number
): ReadonlyArray<SfcEntryPairs> | InvalidInput => {
  if (!Array.isArray(entries)) return problem("entries", "entries must be an array")
  let bytes = 0
  const out: Array<SfcEntryPairs> = []
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index]
    const field = `entries[${index}]`
    if (typeof entry !== "object" || entry === null) return problem(field, `${field} must be an object of strings`)
    const pairs: ReadonlyArray<readonly [string, unknown]> = Object.entries(entry)
    if (typeof entry["type"] !== "string" || entry["type"].length === 0) return problem(field, `${field} needs a non-empty type`)
    if (pairs.length > MAX_ENTRY_FIELDS) return problem(field, `${field} has ${pairs.length} fields; the limit is ${MAX_ENTRY_FIELDS}`)
    for (const [name, value] of pairs) {
      if (name.length === 0 || !name.isWellFormed()) return problem(field, `${field} has an empty or malformed field name`)
      if (typeof value !== "string" || !value.isWellFormed()) return problem(field, `${field}.${name} must be a well-formed string`)
      bytes += Buffer.byteLength(name, "utf8") + Buffer.byteLength(value, "utf8")
    }
    out.push(pairs as SfcEntryPairs)
  }
  if (bytes > maxBytes) return problem("entries", `entries are ${bytes} bytes together; the limit is ${maxBytes}`)
  return out
}

/**
 * Checks the waits lists. A type named twice in one list counts once (several actions of a step
 * may wait for the same type; the first wait start wins, as ZADD NX would keep it); a type both
 * joined and left in one write is ambiguous and rejected.
 */
export const waitsChecked = (
  join: ReadonlyArray<WaitJoin>,
  leave: ReadonlyArray<string>
): { readonly join: ReadonlyArray<WaitJoin>; readonly leave: ReadonlyArray<string> } | InvalidInput => {
  if (!Array.isArray(join) || !Array.isArray(leave)) return problem("waits", "waitsAdd and waitsRemove must be arrays")
  // The common write joins and leaves nothing: no maps to build.
  if (join.length === 0 && leave.length === 0) return { join, leave }
  const joined = new Map<string, WaitJoin>()
  for (let index = 0; index < join.length; index++) {
    const wait = join[index]!
    const found = textProblem(`waitsAdd[${index}].typeId`, wait?.typeId) ?? timeProblem(`waitsAdd[${index}].since`, wait.since)
    if (found) return found
    if (!joined.has(wait.typeId)) joined.set(wait.typeId, { typeId: wait.typeId, since: wait.since })
  }
  const left = new Set<string>()
  for (let index = 0; index < leave.length; index++) {
    const typeId = leave[index]!
    const found = textProblem(`waitsRemove[${index}]`, typeId)
    if (found) return found
    if (joined.has(typeId)) return problem("waitsRemove", `type '${typeId}' is both added to and removed from the waits`)
    left.add(typeId)
  }
  return { join: [...joined.values()], leave: [...left] }
}

export const checkWaits = (join: ReadonlyArray<WaitJoin>, leave: ReadonlyArray<string>) => Effect.suspend(() => lift(waitsChecked(join, leave)))

/**
 * Checks the moved waits (the job stays in the set with a new wait start). A type named twice
 * counts once, the last start winning; a type both moved and left in one write is rejected.
 */
export const waitMovesChecked = (move: ReadonlyArray<WaitJoin>, leave: ReadonlyArray<string>): ReadonlyArray<WaitJoin> | InvalidInput => {
  if (!Array.isArray(move)) return problem("waitsMove", "waitsMove must be an array")
  if (move.length === 0) return move
  const moved = new Map<string, WaitJoin>()
  for (let index = 0; index < move.length; index++) {
    const wait = move[index]!
    const found = textProblem(`waitsMove[${index}].typeId`, wait?.typeId) ?? timeProblem(`waitsMove[${index}].since`, wait.since)
    if (found) return found
    if (leave.includes(wait.typeId)) return problem("waitsMove", `type '${wait.typeId}' is both moved in and removed from the waits`)
    moved.set(wait.typeId, { typeId: wait.typeId, since: wait.since })
  }
  return [...moved.values()]
}
