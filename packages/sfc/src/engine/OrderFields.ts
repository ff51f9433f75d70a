import type { Draft } from "./Draft.js"
import { settle } from "./Flow.js"
import type { RecipeIndex } from "./RecipeIndex.js"
import { conditionReads } from "../condition/index.js"

/**
 * The job order in the state (v1.1.0): conditions read its fields (`order.Priority`), so the
 * state keeps the job order as the MES sent it, cut down to the paths they read (a job order
 * can be large; most recipes read none, and then nothing is kept). An Update of the job order
 * reaches the engine as the `order` input, which replaces it and evaluates a waiting step's
 * transitions again.
 */

const cache = new WeakMap<RecipeIndex, ReadonlyArray<ReadonlyArray<string>>>()

/** Every job order path the recipe's conditions read, each once. */
const orderPaths = (index: RecipeIndex): ReadonlyArray<ReadonlyArray<string>> => {
  let paths = cache.get(index)
  if (paths === undefined) {
    const byKey = new Map<string, ReadonlyArray<string>>()
    for (const t of index.recipe.Transitions) {
      const ast = index.v11 ? index.parse(t.Condition) : undefined
      for (const path of ast === undefined ? [] : conditionReads(ast).orderFields) byKey.set(JSON.stringify(path), path)
    }
    cache.set(index, (paths = [...byKey.values()]))
  }
  return paths
}

// A key such as `__proto__` is kept as an own field, never as the object's prototype.
const setOwn = (into: object, key: string | number, value: unknown) =>
  Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true })

/** `value` with only what `paths` reach: own fields of objects, array elements by index (others null). */
const cut = (value: unknown, paths: ReadonlyArray<ReadonlyArray<string>>): unknown => {
  if (paths.some((path) => path.length === 0)) return value
  if (typeof value !== "object" || value === null) return undefined
  const kept: object = Array.isArray(value) ? [] : {}
  for (const segment of new Set(paths.map((path) => path[0]!))) {
    const inArray = Array.isArray(value) && /^(?:0|[1-9][0-9]*)$/.test(segment)
    if (!(inArray || (!Array.isArray(value) && Object.hasOwn(value, segment)))) continue
    const inner = cut((value as Record<string, unknown>)[segment], paths.filter((p) => p[0] === segment).map((p) => p.slice(1)))
    if (inner !== undefined) setOwn(kept, inArray ? Number(segment) : segment, inner)
  }
  return Array.isArray(kept) ? Array.from(kept, (element) => element ?? null) : kept
}

/** What the state keeps of a job order: `{ order }` with the fields conditions read, or nothing. */
export const orderKept = (index: RecipeIndex, order: unknown): { readonly order?: unknown } => {
  const paths = orderPaths(index)
  return paths.length === 0 || order === undefined ? {} : { order: cut(order, paths) ?? null }
}

/** The job order was updated: keep its fields and evaluate a waiting step's transitions again. */
export const applyOrder = (draft: Draft, order: unknown): string | undefined => {
  const { order: kept } = orderKept(draft.index, order)
  if (JSON.stringify(kept) === JSON.stringify(draft.state.order)) return "the job order fields the conditions read did not change"
  if (kept === undefined) delete draft.state.order
  else draft.state.order = kept
  draft.touch()
  draft.recheck = true
  if (draft.state.status === "running") settle(draft)
  return undefined
}
