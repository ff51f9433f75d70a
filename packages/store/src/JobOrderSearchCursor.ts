import { createHash } from "node:crypto"
import type { SearchDriver } from "@microdcs/lua-scripts"
import { filterFingerprint, type JobOrderSearchFilter } from "./JobOrderSearchFilter.js"

/**
 * Where a search goes on: the scope, the dimension its pages walk there, the range of it and the
 * index member after which. Opaque to callers (base64url of JSON), bound to the filter it was
 * made for by a digest, so a cursor handed to another search is refused, not misread.
 */
export interface SearchPosition {
  readonly scope: string
  /** "" = not chosen yet (the scope starts afresh). */
  readonly driver: SearchDriver | ""
  readonly range: number
  readonly after: string
}

const drivers: ReadonlyArray<string> = ["", "f", "s", "w", "x", "c", "e", "p", "r"]

const digest = (fingerprint: string): string => createHash("sha1").update(fingerprint).digest("base64url").slice(0, 12)

export const encodeCursor = (fingerprint: string, p: SearchPosition): string =>
  Buffer.from(JSON.stringify({ v: 1, f: digest(fingerprint), s: p.scope, d: p.driver, r: p.range, a: p.after }), "utf8").toString("base64url")

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The dimensions a filter's search may walk, each with its number of ranges (as the search script
 * builds them): a cursor naming another is forged or stale and is refused here, not by the server.
 */
export const searchDriversOf = (filter: JobOrderSearchFilter): ReadonlyMap<string, number> => {
  const states = filter.errorText !== undefined ? 1 : new Set(filter.states ?? []).size
  const found: Array<readonly [string, number]> = [["", 1], ["c", 1]]
  if (filter.errorText !== undefined) found.push(["r", 1])
  if (filter.idPrefix !== undefined) found.push(["f", 1])
  if (states > 0) found.push(["s", states])
  if (filter.workMaster !== undefined) found.push(["w", 1])
  if (filter.workMaster !== undefined && states > 0) found.push(["x", states])
  if (filter.endedFrom !== undefined || filter.endedTo !== undefined) found.push(["e", 1])
  if (filter.priorityMin !== undefined || filter.priorityMax !== undefined) found.push(["p", 1])
  return new Map(found)
}

/** The position a cursor names, or why it cannot be used with this filter. */
export const decodeCursor = (filter: JobOrderSearchFilter, cursor: string): SearchPosition | string => {
  const fingerprint = filterFingerprint(filter)
  let parsed: unknown
  try {
    parsed = /^[A-Za-z0-9_-]+$/.test(cursor) ? JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) : undefined
  } catch {
    parsed = undefined
  }
  if (!isObject(parsed) || parsed["v"] !== 1) return "after is not a cursor this search gave"
  const { f, s, d, r, a } = parsed
  if (typeof s !== "string" || s === "" || typeof d !== "string" || !drivers.includes(d) || typeof a !== "string" || typeof r !== "number" || !Number.isInteger(r) || r < 1) {
    return "after is not a cursor this search gave"
  }
  if (f !== digest(fingerprint)) return "after is the cursor of another search (its filter differs)"
  const ranges = searchDriversOf(filter).get(d)
  if (ranges === undefined || r > ranges) return "after is not a cursor this search gave (it names a walk this filter has not)"
  return { scope: s, driver: d as SearchDriver | "", range: r, after: a }
}
