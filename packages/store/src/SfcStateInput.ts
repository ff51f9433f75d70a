import { Effect } from "effect"
import type { SfcEntryPairs } from "@microdcs/lua-scripts"
import { InvalidInput } from "./Errors.js"

/**
 * Input checks of the SFC state CAS that need no key schema: versions, numbers, entries and the
 * waits lists. Everything here runs before anything is sent, so bad input writes nothing.
 */

/** More field/value pairs than this in one entry is a bug in the engine, and Lua's unpack limit is near. */
export const MAX_ENTRY_FIELDS = 1000

export interface WaitJoin {
  readonly typeId: string
  /** Wait start, epoch ms; kept when the job already waits in that set. */
  readonly since: number
}

const fail = (field: string, message: string) => Effect.fail(new InvalidInput({ field, message }))

/** A CAS always compares: `0` creates, `n > 0` must match. There is no unconditional write. */
export const checkCasVersion = (expected: number): Effect.Effect<void, InvalidInput> =>
  Number.isSafeInteger(expected) && expected >= 0
    ? Effect.void
    : fail("expectedVersion", "expectedVersion must be 0 (create only) or a positive integer")

export const checkText = (field: string, value: unknown): Effect.Effect<void, InvalidInput> => {
  if (typeof value !== "string" || value.length === 0) return fail(field, `${field} must be a non-empty string`)
  if (!value.isWellFormed()) return fail(field, `${field} is not well-formed UTF-8`)
  return Effect.void
}

/** Epoch-ms values (deadlines, wait starts, `now`) become zset scores: finite numbers only. */
export const checkTime = (field: string, value: unknown): Effect.Effect<void, InvalidInput> =>
  typeof value === "number" && Number.isFinite(value) ? Effect.void : fail(field, `${field} must be a finite number (epoch ms)`)

/**
 * Turns the entries into XADD field/value pairs. Each entry needs a non-empty `type`; field names
 * are non-empty, values are strings; all entries together stay under the document size limit.
 */
export const checkEntries = (
  entries: ReadonlyArray<Readonly<Record<string, string>>>,
  maxBytes: number
): Effect.Effect<ReadonlyArray<SfcEntryPairs>, InvalidInput> =>
  Effect.suspend(() => {
    if (!Array.isArray(entries)) return fail("entries", "entries must be an array")
    let bytes = 0
    const out: Array<SfcEntryPairs> = []
    for (const [index, entry] of entries.entries()) {
      const field = `entries[${index}]`
      if (typeof entry !== "object" || entry === null) return fail(field, `${field} must be an object of strings`)
      const pairs: ReadonlyArray<readonly [string, unknown]> = Object.entries(entry)
      if (typeof entry["type"] !== "string" || entry["type"].length === 0) return fail(field, `${field} needs a non-empty type`)
      if (pairs.length > MAX_ENTRY_FIELDS) return fail(field, `${field} has ${pairs.length} fields; the limit is ${MAX_ENTRY_FIELDS}`)
      for (const [name, value] of pairs) {
        if (name.length === 0 || !name.isWellFormed()) return fail(field, `${field} has an empty or malformed field name`)
        if (typeof value !== "string" || !value.isWellFormed()) {
          return fail(field, `${field}.${name} must be a well-formed string`)
        }
        bytes += Buffer.byteLength(name, "utf8") + Buffer.byteLength(value, "utf8")
      }
      out.push(pairs as SfcEntryPairs)
    }
    if (bytes > maxBytes) return fail("entries", `entries are ${bytes} bytes together; the limit is ${maxBytes}`)
    return Effect.succeed(out)
  })

/**
 * Checks the waits lists. A type named twice in one list counts once (several actions of a step
 * may wait for the same type; the first wait start wins, as ZADD NX would keep it); a type both
 * joined and left in one write is ambiguous and rejected.
 */
export const checkWaits = (
  join: ReadonlyArray<WaitJoin>,
  leave: ReadonlyArray<string>
): Effect.Effect<{ readonly join: ReadonlyArray<WaitJoin>; readonly leave: ReadonlyArray<string> }, InvalidInput> =>
  Effect.gen(function* () {
    if (!Array.isArray(join) || !Array.isArray(leave)) return yield* fail("waits", "waitsAdd and waitsRemove must be arrays")
    const joined = new Map<string, WaitJoin>()
    for (const [index, wait] of join.entries()) {
      yield* checkText(`waitsAdd[${index}].typeId`, wait?.typeId)
      yield* checkTime(`waitsAdd[${index}].since`, wait.since)
      if (!joined.has(wait.typeId)) joined.set(wait.typeId, { typeId: wait.typeId, since: wait.since })
    }
    const left = new Set<string>()
    for (const [index, typeId] of leave.entries()) {
      yield* checkText(`waitsRemove[${index}]`, typeId)
      if (joined.has(typeId)) return yield* fail("waitsRemove", `type '${typeId}' is both added to and removed from the waits`)
      left.add(typeId)
    }
    return { join: [...joined.values()], leave: [...left] }
  })

/**
 * Checks the moved waits (the job stays in the set with a new wait start). A type named twice
 * counts once, the last start winning; a type both moved and left in one write is rejected.
 */
export const checkWaitMoves = (
  move: ReadonlyArray<WaitJoin>,
  leave: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<WaitJoin>, InvalidInput> =>
  Effect.gen(function* () {
    if (!Array.isArray(move)) return yield* fail("waitsMove", "waitsMove must be an array")
    const moved = new Map<string, WaitJoin>()
    for (const [index, wait] of move.entries()) {
      yield* checkText(`waitsMove[${index}].typeId`, wait?.typeId)
      yield* checkTime(`waitsMove[${index}].since`, wait.since)
      if (leave.includes(wait.typeId)) return yield* fail("waitsMove", `type '${wait.typeId}' is both moved in and removed from the waits`)
      moved.set(wait.typeId, { typeId: wait.typeId, since: wait.since })
    }
    return [...moved.values()]
  })
