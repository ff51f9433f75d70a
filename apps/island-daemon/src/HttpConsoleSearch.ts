import { Effect } from "effect"
import { JobOrderSearch, type JobOrderSearchFilter, MAX_SEARCH_LIMIT, searchFilterProblems, searchOptionsProblems, searchTimeOf } from "@microdcs/store"
import { tokenRoute } from "./HttpAccess.js"
import { badRequestListing, consoleReply, ok, query } from "./HttpConsoleReply.js"

/** A time given as epoch ms or ISO 8601, or the problem with it. */
const timeOf = (name: string, text: string | null, problems: Array<string>): number | undefined => {
  if (text === null || text === "") return undefined
  const ms = searchTimeOf(name, text)
  if (typeof ms === "number") return ms
  problems.push(ms)
  return undefined
}

const numberOf = (name: string, text: string | null, problems: Array<string>): number | undefined => {
  if (text === null || text === "") return undefined
  const n = Number(text)
  if (Number.isFinite(n)) return n
  problems.push(`${name} must be a number, got '${text}'`)
  return undefined
}

/** A repeatable, comma-separated parameter (`state=Running&state=Aborted`, `state=Running,Aborted`); `undefined` when absent. */
const listOf = (q: URLSearchParams, name: string): ReadonlyArray<string> | undefined => {
  const values = q.getAll(name).flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== "")
  return values.length === 0 ? undefined : values
}

const textOf = (q: URLSearchParams, name: string): string | undefined => {
  const text = q.get(name)
  return text === null || text === "" ? undefined : text
}

/** The query's names a search reads as filters (`after` and `limit` page it). */
export const SEARCH_FILTER_NAMES = ["scope", "idPrefix", "state", "workMaster", "createdFrom", "createdTo", "endedFrom", "endedTo", "priorityMin", "priorityMax", "error"] as const

/** The search a query string asks for, with every problem of it (empty when it may run). */
export const searchRequest = (q: URLSearchParams) => {
  const problems: Array<string> = []
  const filter: JobOrderSearchFilter = {
    scopes: listOf(q, "scope"),
    idPrefix: textOf(q, "idPrefix"),
    states: listOf(q, "state"),
    workMaster: textOf(q, "workMaster"),
    createdFrom: timeOf("createdFrom", q.get("createdFrom"), problems),
    createdTo: timeOf("createdTo", q.get("createdTo"), problems),
    endedFrom: timeOf("endedFrom", q.get("endedFrom"), problems),
    endedTo: timeOf("endedTo", q.get("endedTo"), problems),
    priorityMin: numberOf("priorityMin", q.get("priorityMin"), problems),
    priorityMax: numberOf("priorityMax", q.get("priorityMax"), problems),
    errorText: textOf(q, "error")
  }
  const limitText = q.get("limit")
  const limit = limitText === null || limitText === "" ? 50 : Number(limitText)
  const options = { limit, ...(textOf(q, "after") === undefined ? {} : { after: textOf(q, "after") }) }
  problems.push(...searchFilterProblems(filter), ...searchOptionsProblems(options))
  return { filter, options, problems }
}

const searchAnswer = Effect.gen(function* () {
  const { filter, options, problems } = searchRequest(yield* query)
  if (problems.length > 0) return badRequestListing(problems)
  return ok(yield* Effect.flatMap(JobOrderSearch, (s) => s.search(filter, options)))
})

/**
 * `GET /api/console/search`: job orders across scopes from the search index, with the total and a
 * cursor. Filters: `scope` and `state` (repeatable or comma-separated), `idPrefix`, `workMaster`,
 * `createdFrom`/`createdTo`, `endedFrom`/`endedTo` (ISO 8601 or epoch ms), `priorityMin`/`priorityMax`,
 * `error` (text of an Aborted job order's reason); `after` (a page's `next`) and `limit` (1 to
 * MAX_SEARCH_LIMIT, default 50). A bad query is 400 listing every problem.
 */
export const consoleSearchRoute = tokenRoute("/api/console/search", consoleReply(searchAnswer))

const countAnswer = Effect.gen(function* () {
  const { filter, problems } = searchRequest(yield* query)
  if (problems.length > 0) return badRequestListing(problems)
  return ok(yield* Effect.flatMap(JobOrderSearch, (s) => s.count(filter)))
})

/**
 * `GET /api/console/search/count`: how many job orders a search finds, `{total, totalExact}`,
 * counted one by one where a page's total is only an upper bound (what a bulk action asks
 * before it runs). The same filters as `/api/console/search`.
 */
export const consoleSearchCountRoute = tokenRoute("/api/console/search/count", consoleReply(countAnswer))

export { MAX_SEARCH_LIMIT }
