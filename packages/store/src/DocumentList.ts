import { Effect } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import { keyProblem, numberProblem } from "./DocumentInput.js"
import type { DocumentPage, ListSpec, PageRequest } from "./DocumentSpec.js"
import { type ConnectionError, InvalidInput, type WrongType } from "./Errors.js"

/** The paged list of a scope, highest or lowest first as its index orders it. */
export type PagedList<Item> = (
  scope: string,
  page?: PageRequest
) => Effect.Effect<DocumentPage<Item>, WrongType | InvalidInput | ConnectionError>

const DEFAULT_PAGE = 100

/** A page beyond this offset or count is no page any index holds, and Valkey refuses the range. */
const MAX_PAGE_NUMBER = Number.MAX_SAFE_INTEGER - 1

/** Why a page bound is refused, or `undefined`. */
const pageProblem = (field: string, value: number): InvalidInput | undefined =>
  numberProblem(field, value) ??
  (value > MAX_PAGE_NUMBER ? new InvalidInput({ field, message: `${field} must be at most ${MAX_PAGE_NUMBER}` }) : undefined)

/** `count` items of the index from `offset`, reading one more to tell whether a next page exists. */
export const pagedList =
  <Item>(spec: ListSpec<Item>): PagedList<Item> =>
  (scope, page = {}) =>
    Effect.suspend((): ReturnType<PagedList<Item>> => {
      const key = spec.key(scope)
      if (key instanceof KeyPartError) return Effect.fail(keyProblem(key))
      const problem = pageProblem("offset", page.offset ?? 0) ?? pageProblem("count", page.count ?? DEFAULT_PAGE)
      if (problem) return Effect.fail(problem)
      const offset = Math.max(0, Math.floor(page.offset ?? 0))
      const count = Math.max(1, Math.floor(page.count ?? DEFAULT_PAGE))
      return spec.read(key, offset, count + 1).pipe(
        Effect.map((items): DocumentPage<Item> => {
          const more = items.length > count
          return { items: more ? items.slice(0, count) : items, next: more ? offset + count : null }
        })
      )
    })
