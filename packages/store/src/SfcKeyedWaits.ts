import { Effect } from "effect"
import type { KeyFamily, KeyParts } from "@microdcs/keyschema"
import type { SfcKeyedWaitArgs } from "@microdcs/lua-scripts"
import { InvalidInput, type ConnectionError, type WrongType } from "./Errors.js"
import { textProblem, timeProblem } from "./SfcStateInput.js"
import { typedCommand } from "./TypeGuard.js"
import type { ValkeyService } from "./Valkey.js"

/**
 * Keyed waits of SFC jobs: a pull event whose action names a correlation key waits in
 * `sfc:keyed:{scope}:{typeId}:{place}:{value}` (job ids by wait start) instead of the type's waits
 * set, and `sfc:keyplaces:{scope}:{typeId}` counts the keyed waits per place, so an event is
 * looked up by the value it carries at each place: a few reads, whatever the number of waiting
 * jobs. Written only by the CAS (and the delete) with the rest of the job's state.
 */

/** A keyed wait: the event type, where its key is (`attribute.<name>` or `data.<path>`) and the value the job expects. */
export interface SfcKeyedWait {
  readonly typeId: string
  readonly key: { readonly place: string; readonly value: string }
}

/** A keyed wait with its start (epoch ms): the order among the jobs that expect the same key. */
export interface SfcKeyedWaitJoin extends SfcKeyedWait {
  readonly since: number
}

/** The checked keyed waits of one write. */
export interface KeyedWaitsChecked {
  readonly add: ReadonlyArray<SfcKeyedWaitJoin>
  readonly move: ReadonlyArray<SfcKeyedWaitJoin>
  readonly remove: ReadonlyArray<SfcKeyedWait>
}

const idOf = (wait: SfcKeyedWait): string => JSON.stringify([wait.typeId, wait.key.place, wait.key.value])

const waitProblem = (field: string, wait: Partial<SfcKeyedWaitJoin> | undefined, timed: boolean): InvalidInput | undefined =>
  textProblem(`${field}.typeId`, wait?.typeId) ??
  textProblem(`${field}.key.place`, wait?.key?.place) ??
  textProblem(`${field}.key.value`, wait?.key?.value) ??
  (timed ? timeProblem(`${field}.since`, wait?.since) : undefined)

/** Each wait checked and named once (`keepFirst`: the first start wins, else the last). */
const listChecked = <W extends SfcKeyedWait>(field: string, list: ReadonlyArray<W> | undefined, timed: boolean, keepFirst: boolean): Map<string, W> | InvalidInput => {
  if (list !== undefined && !Array.isArray(list)) return new InvalidInput({ field, message: `${field} must be an array` })
  const waits = new Map<string, W>()
  for (const [index, wait] of (list ?? []).entries()) {
    const found = waitProblem(`${field}[${index}]`, wait, timed)
    if (found) return found
    if (!keepFirst || !waits.has(idOf(wait))) waits.set(idOf(wait), wait)
  }
  return waits
}

/**
 * Checks a write's keyed waits as the by-type ones are checked: a wait named twice counts once
 * (the first start of an added one, the last of a moved one); one both added or moved and
 * removed in one write is ambiguous and refused.
 */
export const keyedWaitsChecked = (
  add: ReadonlyArray<SfcKeyedWaitJoin> | undefined,
  move: ReadonlyArray<SfcKeyedWaitJoin> | undefined,
  remove: ReadonlyArray<SfcKeyedWait> | undefined
): KeyedWaitsChecked | InvalidInput => {
  const added = listChecked("keyedWaitsAdd", add, true, true)
  if (added instanceof InvalidInput) return added
  const moved = listChecked("keyedWaitsMove", move, true, false)
  if (moved instanceof InvalidInput) return moved
  const removed = listChecked("keyedWaitsRemove", remove, false, true)
  if (removed instanceof InvalidInput) return removed
  for (const [id, wait] of removed) {
    if (added.has(id) || moved.has(id)) {
      return new InvalidInput({ field: "keyedWaitsRemove", message: `keyed wait '${wait.typeId}' at ${wait.key.place} = '${wait.key.value}' is both kept and removed` })
    }
  }
  return { add: [...added.values()], move: [...moved.values()], remove: [...removed.values()] }
}

/** A list of keyed waits (a delete's), checked and each named once; `field` names it in a problem. */
export const keyedWaitRefsChecked = (field: string, list: ReadonlyArray<SfcKeyedWait> | undefined): ReadonlyArray<SfcKeyedWait> | InvalidInput => {
  const checked = listChecked(field, list, false, true)
  return checked instanceof InvalidInput ? checked : [...checked.values()]
}

type KeyOf = <F extends KeyFamily>(family: F, parts: KeyParts<F>) => string

/** A keyed wait's keys and place, as the scripts take them. */
export const keyedWaitArgs = (key: KeyOf, scope: string, wait: SfcKeyedWait): SfcKeyedWaitArgs => ({
  key: key("sfcKeyedWaits", { scope, typeId: wait.typeId, place: wait.key.place, value: wait.key.value }),
  places: key("sfcKeyPlaces", { scope, typeId: wait.typeId }),
  place: wait.key.place
})

/** The places whose keyed waits of `typeId` exist in the scope: where an event of the type may carry a key. */
export const keyPlaces = (valkey: ValkeyService, scope: string, typeId: string): Effect.Effect<ReadonlyArray<string>, WrongType | InvalidInput | ConnectionError> =>
  valkey.key("sfcKeyPlaces", { scope, typeId }).pipe(Effect.flatMap((key) => typedCommand(valkey, "sfc key places", key, "hash", (c) => c.hkeys(key))))

/** Jobs whose wait for `typeId` expects `key`, longest waiting first (at most `limit`). */
export const keyedWaiting = (
  valkey: ValkeyService,
  scope: string,
  wait: SfcKeyedWait,
  limit: number
): Effect.Effect<ReadonlyArray<{ readonly jobId: string; readonly since: number }>, WrongType | InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    if (!(Number.isSafeInteger(limit) && limit > 0)) return yield* new InvalidInput({ field: "limit", message: "limit must be a positive integer" })
    const key = yield* valkey.key("sfcKeyedWaits", { scope, typeId: wait.typeId, place: wait.key.place, value: wait.key.value })
    const flat = yield* typedCommand(valkey, "keyed waiting sfc jobs", key, "zset", (c) => c.zrange(key, 0, limit - 1, "WITHSCORES"))
    const jobs: Array<{ readonly jobId: string; readonly since: number }> = []
    for (let i = 0; i < flat.length; i += 2) jobs.push({ jobId: flat[i]!, since: Number(flat[i + 1]) })
    return jobs
  })
