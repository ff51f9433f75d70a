import { createHash } from "node:crypto"
import type { SearchDriver } from "@microdcs/lua-scripts"

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

/** The position a cursor names, or why it cannot be used with this filter. */
export const decodeCursor = (fingerprint: string, cursor: string): SearchPosition | string => {
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
  return { scope: s, driver: d as SearchDriver | "", range: r, after: a }
}
