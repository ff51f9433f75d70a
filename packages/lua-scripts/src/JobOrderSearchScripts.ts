import { asArray, asInteger, asText, UnexpectedReply } from "./Reply.js"
import { defineScript } from "./ScriptDescriptor.js"
import { decodeWrongType, type WrongTypeReply } from "./WrongTypeReply.js"

/**
 * The job order search index (`joborder:search:{scope}`, see `lib/joborder-search.lua`): its
 * read and its check and rebuild. The write scripts of job orders keep it.
 */

/** A dimension a search walks: id prefix, states, work master, both, created, ended, priority, error text. */
export type SearchDriver = "f" | "s" | "w" | "x" | "c" | "e" | "p" | "r"

const drivers: ReadonlyArray<string> = ["f", "s", "w", "x", "c", "e", "p", "r"]

const unescape = (text: string): string => text.replace(/\u0001([\u0001\u0002])/g, (_, c: string) => (c === "\u0001" ? "\u0001" : "\u0000"))

/** How many fields order each kind of member before the job order's facts (see `lib/joborder-search.lua`). */
const heads: Readonly<Record<string, number>> = { f: 0, c: 1, s: 2, p: 2, w: 2, x: 3, e: 1, r: 1 }

/** The job order id a member of the search index names, or `undefined` for no member of it. */
export const searchMemberId = (member: string): string | undefined => {
  const p = member.split("\u0000")
  const h = heads[p[0] ?? ""]
  return h === undefined || p.length < h + 7 ? undefined : unescape(p[h + 1]!)
}

export interface SearchJobOrdersArgs {
  readonly mode: "page" | "count"
  /** "" = the script chooses the dimension of the fewest members. */
  readonly driver: SearchDriver | ""
  /**
   * 1-based range of the driver to go on in, and the position to go on after ("" = from the start):
   * a member's head up to and including its id (a whole member is cut there), as a reply's `next` gives it.
   */
  readonly range: number
  readonly after: string
  /** The page size; in count mode 1 = count one by one only when every member fits the budget, 0 = as far as it goes. */
  readonly limit: number
  readonly budget: number
  readonly idPrefix: string
  readonly states: ReadonlyArray<string>
  readonly workMaster: string
  /** Epoch ms, `undefined` = open. */
  readonly createdFrom?: number | undefined
  readonly createdTo?: number | undefined
  readonly endedFrom?: number | undefined
  readonly endedTo?: number | undefined
  readonly priorityMin?: number | undefined
  readonly priorityMax?: number | undefined
  /** Lower case; "" = any. */
  readonly errorText: string
}

/** One match: its facts, as the index keeps them (times in ms, `ended` null while not finished). */
export interface SearchFacts {
  readonly id: string
  readonly state: string
  readonly createdMs: number
  readonly endedMs: number | null
  readonly priority: number
  readonly workMaster: string
  readonly error: string
}

export type SearchJobOrdersReply =
  | {
      readonly status: "ok"
      readonly driver: SearchDriver
      /** Members in the driver's ranges; with `exact` in page mode, the matches. */
      readonly count: number
      /** Page mode: the driver alone decides the matches. Count mode: the walk finished (`matched` is all of them). */
      readonly exact: boolean
      /** Count mode: matches found in this call's walk. */
      readonly matched: number
      /** Where a later call goes on; `null` when nothing is left. */
      readonly next: { readonly range: number; readonly after: string } | null
      readonly items: ReadonlyArray<SearchFacts>
    }
  | WrongTypeReply

/** A facts member (`f\0id\0state\0created\0ended\0priority\0workMaster\0error`), or `undefined` when it is not one. */
export const parseSearchFacts = (member: string): SearchFacts | undefined => {
  const p = member.split("\u0000")
  if (p.length !== 8 || p[0] !== "f") return undefined
  const [, id, state, created, ended, priority, workMaster, error] = p as [string, string, string, string, string, string, string, string]
  return {
    id: unescape(id),
    state: unescape(state),
    createdMs: Number(created),
    endedMs: ended === "" ? null : Number(ended),
    priority: Math.round((Number(priority) - 1e9) * 1e4) / 1e4,
    workMaster: unescape(workMaster),
    error: unescape(error)
  }
}

const opt = (n: number | undefined): string | number => (n === undefined ? "" : n)

const decodeSearch = (raw: unknown): SearchJobOrdersReply => {
  const script = "search-joborder"
  const reply = asArray(script, raw)
  const status = asText(script, reply[0])
  if (status === "wrongtype") return decodeWrongType(script, reply)
  const driver = asText(script, reply[1])
  if (status !== "ok" || !drivers.includes(driver)) throw new UnexpectedReply(script, raw)
  const range = asInteger(script, reply[4])
  const items = reply.slice(7).map((m) => {
    const facts = parseSearchFacts(asText(script, m))
    if (facts === undefined) throw new UnexpectedReply(script, raw)
    return facts
  })
  const next = range === 0 ? null : { range, after: asText(script, reply[5]) }
  const count = asInteger(script, reply[2])
  return { status, driver: driver as SearchDriver, count, exact: reply[3] === "1", matched: asInteger(script, reply[6]), next, items }
}

/** Read only: a page or the count of a job order search in one scope (see the script's header). */
export const searchJobOrders = defineScript({
  file: "search-joborder-1.lua",
  keys: ["search"],
  encodeArgs: (a: SearchJobOrdersArgs) => [
    a.mode, a.driver, a.range, a.after, a.limit, a.budget, a.idPrefix, a.states.join(","), a.workMaster,
    opt(a.createdFrom), opt(a.createdTo), opt(a.endedFrom), opt(a.endedTo), opt(a.priorityMin), opt(a.priorityMax), a.errorText
  ],
  decodeReply: decodeSearch
})

export interface RepairJobOrderSearchArgs {
  readonly mode: "check" | "repair"
  readonly scope: string
  readonly id: string
  /** Members of the index the caller found for the id. */
  readonly extra: ReadonlyArray<string>
}

export type RepairJobOrderSearchReply = { readonly status: "ok"; readonly count: number } | WrongTypeReply

/** The check (entries missing or wrong) and rebuild of one job order's search entries. */
export const repairJobOrderSearch = defineScript({
  file: "repair-joborder-search-2.lua",
  keys: ["doc", "search"],
  encodeArgs: (a: RepairJobOrderSearchArgs) => [a.mode, a.scope, a.id, ...a.extra],
  decodeReply: (raw): RepairJobOrderSearchReply => {
    const script = "repair-joborder-search"
    const reply = asArray(script, raw)
    const status = asText(script, reply[0])
    if (status === "wrongtype") return decodeWrongType(script, reply)
    if (status !== "ok") throw new UnexpectedReply(script, raw)
    return { status, count: asInteger(script, reply[1]) }
  }
})
