import type { Recipe } from "../recipe/Recipe.js"
import { eventKeyAt, expectedKeys, type KeyedEvent, keyPlaceOf } from "./CorrelationKeys.js"
import type { Draft } from "./Draft.js"
import { type ExecutionState, isTerminalStatus } from "./ExecutionState.js"
import type { RecipeIndex } from "./RecipeIndex.js"

/**
 * Waits by correlation key: a pull event whose action names a `CorrelationKey` waits in the
 * store's index under (scope, type, key place, expected value) instead of the by-type waits set, so
 * an event is routed to the job its key names, not to the one that has waited longest.
 */

/** Where the key is (`attribute.<name>` or `data.<path>`) and the value the job expects there. */
export interface WaitKey {
  readonly place: string
  readonly value: string
}

/** A keyed wait the job is in: its type and key. */
export interface KeyedWait {
  readonly typeId: string
  readonly key: WaitKey
}

/** A keyed wait with its start (the order among jobs that wait with the same key). */
export interface KeyedWaitChange extends KeyedWait {
  readonly since: number
}

/**
 * The key each keyed action of the recipe expects for this job, fixed at start (see
 * `expectedKeys`): the state's `correlationKeys` field (absent when no action names a key), or
 * the problem that fails the job.
 */
export const startKeys = (recipe: Recipe, jobId: string, order: unknown): { readonly correlationKeys?: Readonly<Record<string, string>> } | { readonly problem: string } => {
  const found = expectedKeys(recipe, jobId, order)
  if ("problem" in found) return found
  return Object.keys(found.keys).length > 0 ? { correlationKeys: found.keys } : {}
}

type Keys = ExecutionState["correlationKeys"]
type Action = ReturnType<RecipeIndex["action"]>

/** The key place of an action that waits by key and the value this job expects there, if it does. */
const waitKeyOf = (keys: Keys, action: Action): WaitKey | undefined => {
  const place = keyPlaceOf(action)
  const value = action === undefined ? undefined : keys?.[action.Name]
  return place !== undefined && value !== undefined ? { place, value } : undefined
}

const actionNamed = (state: ExecutionState, name: string): Action => state.recipe.Actions.find((a) => a.Name === name)

/** Whether the action names a correlation key: its waits are keyed, never in a by-type waits set. */
export const waitsByKey = (state: ExecutionState, action: string): boolean => keyPlaceOf(actionNamed(state, action)) !== undefined

/** Every keyed wait the job may be in, whatever its actions' states: what a delete of its state removes. */
export const everyKeyedWait = (state: ExecutionState): ReadonlyArray<KeyedWait> =>
  state.recipe.Actions.flatMap((action) => {
    const key = waitKeyOf(state.correlationKeys, action)
    return key !== undefined ? [{ typeId: action.TypeId, key }] : []
  })

const idOf = (wait: KeyedWait): string => JSON.stringify([wait.typeId, wait.key.place, wait.key.value])

/** The keyed waits of a state, each with its earliest wait start (two actions may share one). */
export const keyedWaitsOf = (state: ExecutionState): Map<string, KeyedWaitChange> => {
  const waits = new Map<string, KeyedWaitChange>()
  if (isTerminalStatus(state.status) || state.correlationKeys === undefined) return waits
  for (const run of state.actions) {
    if (run.state !== "waiting") continue
    const action = actionNamed(state, run.action)
    const key = waitKeyOf(state.correlationKeys, action)
    if (key === undefined) continue
    const wait = { typeId: action!.TypeId, key }
    const earlier = waits.get(idOf(wait))
    const since = Math.min(earlier?.since ?? Infinity, run.waitSince ?? 0)
    waits.set(idOf(wait), { ...wait, since })
  }
  return waits
}

/**
 * The waiting run an event of a type takes (its index in the draft's runs, -1 for none): a keyed
 * run whose expected value the event carries comes first, then a run that names no key. A keyed
 * run never takes an event whose key is another (or missing), however the event was routed.
 */
export const runForEvent = (draft: Draft, eventType: string | undefined, event: KeyedEvent): number => {
  let unkeyed = -1
  for (const [at, run] of draft.actions.entries()) {
    const action = draft.index.action(run.action)
    if (run.state !== "waiting" || action?.TypeId !== eventType) continue
    if (keyPlaceOf(action) === undefined) unkeyed = unkeyed < 0 ? at : unkeyed
    else {
      const key = waitKeyOf(draft.state.correlationKeys, action)
      if (key !== undefined && eventKeyAt(key.place, event) === key.value) return at
    }
  }
  return unkeyed
}
