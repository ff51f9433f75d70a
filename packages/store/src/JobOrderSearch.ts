import { Context, Effect, Layer } from "effect"
import { type SearchDriver, type SearchFacts, type SearchJobOrdersArgs, searchJobOrders } from "@microdcs/lua-scripts"
import { type ConnectionError, InvalidInput, type WrongType } from "./Errors.js"
import { decodeCursor, encodeCursor, type SearchPosition } from "./JobOrderSearchCursor.js"
import {
  DEFAULT_SEARCH_LIMIT,
  filterFingerprint,
  type JobOrderSearchFilter,
  type JobOrderSearchOptions,
  searchFilterProblems,
  asciiLower,
  searchOptionsProblems
} from "./JobOrderSearchFilter.js"
import { ScopeRegistry } from "./ScopeRegistry.js"
import { Valkey, type ValkeyService } from "./Valkey.js"
import { wrongTypeError } from "./WriteReplies.js"

export * from "./JobOrderSearchFilter.js"

/** One job order a search found, from the search index (no document read). */
export interface JobOrderSearchItem {
  readonly scope: string
  readonly id: string
  /** The normalized state name. */
  readonly state: string
  /** The first work master it references; `null` = none. */
  readonly workMaster: string | null
  readonly priority: number
  /** When it was created (epoch ms); `null` for a job order stored before the index kept it. */
  readonly createdMs: number | null
  /** When it became Ended or Aborted; `null` while it is neither. */
  readonly endedMs: number | null
  /** The reason an Aborted job order carries (its last comment), when it has one. */
  readonly error?: string
}

export interface JobOrderSearchCount {
  readonly total: number
  /**
   * `false`: `total` is an upper bound (the narrowest index range), because the other filters were
   * not checked one by one: a page checks up to 500 per scope, `count` up to 200,000.
   */
  readonly totalExact: boolean
}

export interface JobOrderSearchPage extends JobOrderSearchCount {
  readonly items: ReadonlyArray<JobOrderSearchItem>
  /** Pass as `after` for the next page; `null` on the last one. */
  readonly next: string | null
}

export type SearchError = InvalidInput | WrongType | ConnectionError

/** Members looked at per script call, and calls per page: a page of a rare match ends early with a cursor. */
const BUDGET = 2000
const MAX_CALLS = 8
/** A page's total counts member by member up to this many (else it is an upper bound); `count` up to COUNT_BUDGET × COUNT_CALLS. */
const PAGE_COUNT_BUDGET = 500
const COUNT_BUDGET = 5000
const COUNT_CALLS = 40

const itemOf = (scope: string, f: SearchFacts): JobOrderSearchItem => ({
  scope,
  id: f.id,
  state: f.state,
  workMaster: f.workMaster === "" ? null : f.workMaster,
  priority: f.priority,
  createdMs: f.createdMs === 0 ? null : f.createdMs,
  endedMs: f.endedMs,
  ...(f.error === "" ? {} : { error: f.error })
})

const scriptArgs = (filter: JobOrderSearchFilter): Omit<SearchJobOrdersArgs, "mode" | "driver" | "range" | "after" | "limit" | "budget"> => ({
  idPrefix: filter.idPrefix ?? "",
  states: filter.states ?? [],
  workMaster: filter.workMaster ?? "",
  createdFrom: filter.createdFrom,
  createdTo: filter.createdTo,
  endedFrom: filter.endedFrom,
  endedTo: filter.endedTo,
  priorityMin: filter.priorityMin,
  priorityMax: filter.priorityMax,
  errorText: asciiLower(filter.errorText ?? "")
})

const run = (valkey: ValkeyService, scope: string, args: SearchJobOrdersArgs) =>
  Effect.flatMap(valkey.key("jobOrderSearch", { scope }), (search) =>
    Effect.flatMap(valkey.script(searchJobOrders, { search }, args), (reply) =>
      reply.status === "wrongtype" ? Effect.fail(wrongTypeError(reply)) : Effect.succeed(reply)
    )
  )

const problemsError = (problems: ReadonlyArray<string>) => new InvalidInput({ field: "filter", message: problems.join("; ") })

/**
 * One scope's count of matches. Exact from the index alone when one dimension decides the filter;
 * else the matches are counted member by member, `budget` per script call (so the server is never
 * held long), for at most `calls` calls: past that, the total is the driver's count, an upper bound.
 */
const countIn = (valkey: ValkeyService, filter: JobOrderSearchFilter, scope: string, budget: number, calls: number) =>
  Effect.gen(function* () {
    // limit 1: a single call counts one by one only when it can finish.
    const base = { ...scriptArgs(filter), mode: "count" as const, limit: calls === 1 ? 1 : 0, budget }
    let position: { driver: SearchDriver | ""; range: number; after: string } = { driver: "", range: 1, after: "" }
    let matched = 0
    for (let call = 0; call < calls; call++) {
      const reply = yield* run(valkey, scope, { ...base, ...position })
      matched += reply.matched
      if (reply.exact) return { total: matched, totalExact: true }
      if (reply.next === null || call === calls - 1) return { total: reply.count, totalExact: false }
      position = { driver: reply.driver, range: reply.next.range, after: reply.next.after }
    }
    return { total: 0, totalExact: false }
  })

const sumCounts = (counts: ReadonlyArray<JobOrderSearchCount>): JobOrderSearchCount => ({
  total: counts.reduce((n, c) => n + c.total, 0),
  totalExact: counts.every((c) => c.totalExact)
})

const fresh = (scope: string): SearchPosition => ({ scope, driver: "", range: 1, after: "" })

/** Fills one page from `start` on, scope after scope; returns the items and where the next page starts (`undefined`: nothing left). */
const fillPage = (valkey: ValkeyService, filter: JobOrderSearchFilter, scopes: ReadonlyArray<string>, start: SearchPosition | undefined, limit: number) =>
  Effect.gen(function* () {
    const items: Array<JobOrderSearchItem> = []
    const base = scriptArgs(filter)
    let at = start === undefined ? 0 : scopes.findIndex((s) => s >= start.scope)
    if (at < 0 || at >= scopes.length) return { items, next: undefined }
    // A cursor's scope that is gone since: its successor starts afresh.
    let position = start !== undefined && scopes[at] === start.scope ? start : fresh(scopes[at]!)
    for (let calls = 0; calls < MAX_CALLS && items.length < limit; calls++) {
      const { scope, driver, range, after } = position
      const reply = yield* run(valkey, scope, { ...base, mode: "page", driver, range, after, limit: limit - items.length, budget: BUDGET })
      items.push(...reply.items.map((f) => itemOf(scope, f)))
      if (reply.next !== null) position = { scope, driver: reply.driver, range: reply.next.range, after: reply.next.after }
      else if (++at < scopes.length) position = fresh(scopes[at]!)
      else return { items, next: undefined }
    }
    return { items, next: position }
  })

/**
 * Searches job orders through the search index the write scripts keep (`joborder:search:{scope}`):
 * a page is a few lex-range reads, never a scan of documents. Across scopes, scope by scope in name
 * order; in a scope, newest first by the walked dimension (by id for an id prefix alone, by
 * priority for a priority range).
 */
export class JobOrderSearch extends Context.Service<JobOrderSearch>()("@microdcs/store/JobOrderSearch", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const registry = yield* ScopeRegistry

    const scopesOf = (filter: JobOrderSearchFilter) =>
      filter.scopes === undefined ? registry.list : Effect.succeed([...new Set(filter.scopes)].sort())

    /** The number of job orders matching `filter` (see {@link JobOrderSearchCount.totalExact}). */
    const count = (filter: JobOrderSearchFilter): Effect.Effect<JobOrderSearchCount, SearchError> =>
      Effect.gen(function* () {
        const problems = searchFilterProblems(filter)
        if (problems.length > 0) return yield* Effect.fail(problemsError(problems))
        const scopes = yield* scopesOf(filter)
        return sumCounts(yield* Effect.forEach(scopes, (scope) => countIn(valkey, filter, scope, COUNT_BUDGET, COUNT_CALLS), { concurrency: 8 }))
      })

    /** One page of job orders matching `filter`, with the total and the cursor of the next page. */
    const search = (filter: JobOrderSearchFilter, options: JobOrderSearchOptions = {}): Effect.Effect<JobOrderSearchPage, SearchError> =>
      Effect.gen(function* () {
        const fingerprint = filterFingerprint(filter)
        const position = options.after === undefined ? undefined : decodeCursor(filter, options.after)
        const problems = [...searchFilterProblems(filter), ...searchOptionsProblems(options), ...(typeof position === "string" ? [position] : [])]
        if (problems.length > 0) return yield* Effect.fail(problemsError(problems))
        const start = position as SearchPosition | undefined
        const scopes = yield* scopesOf(filter)
        const limit = options.limit ?? DEFAULT_SEARCH_LIMIT
        const [counts, page] = yield* Effect.all(
          [Effect.forEach(scopes, (scope) => countIn(valkey, filter, scope, PAGE_COUNT_BUDGET, 1), { concurrency: 8 }), fillPage(valkey, filter, scopes, start, limit)],
          { concurrency: 2 }
        )
        const cursor = page.next === undefined ? null : encodeCursor(fingerprint, page.next)
        return { items: page.items, ...sumCounts(counts), next: cursor }
      })

    return { search, count } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies.pipe(Layer.provide(ScopeRegistry.Default))
}
