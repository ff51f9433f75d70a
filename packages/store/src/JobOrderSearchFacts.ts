import type { JobOrderSearchFacts } from "@microdcs/lua-scripts"
import { takeParsed } from "./JsonDocument.js"

/**
 * The search facts of a job order document, computed here so the write scripts need not decode
 * the document for them: exactly what `searchDocFacts` in `lib/joborder-search.lua` reads with
 * Lua's cjson (the repair and the index check still do), so a write and a rebuild agree.
 */

/** The most bytes of an Aborted job order's comment the index keeps. */
const ERROR_BYTES = 500

/**
 * At most this many `{` and `[` in a text that gets facts here: cjson refuses nesting deeper than
 * 1000 (JSON.parse does not), and a text with fewer openings cannot nest deeper.
 */
const MAX_OPENINGS = 500

// A \u escape of a surrogate: cjson refuses one that is not half of a pair (JSON.parse does not).
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/

const openingsOver = (text: string, limit: number): boolean => {
  let count = 0
  for (const open of ["{", "["]) {
    for (let at = text.indexOf(open); at !== -1; at = text.indexOf(open, at + 1)) if (++count > limit) return true
  }
  return false
}

/** False for a text cjson might refuse though JSON.parse reads it (rare): the script decodes those itself. */
const cjsonReads = (text: string): boolean =>
  !(text.includes("\\u") && SURROGATE_ESCAPE.test(text)) && !(text.length > MAX_OPENINGS && openingsOver(text, MAX_OPENINGS))

// Lua tables: a JSON object or array; a field of an array, or an index of an object, is nil there.
const isTable = (v: unknown): v is object => typeof v === "object" && v !== null
const field = (v: unknown, name: string): unknown => (isTable(v) && !Array.isArray(v) ? (v as Record<string, unknown>)[name] : undefined)
const first = (v: unknown, index: number): unknown => (Array.isArray(v) ? v[index] : undefined)
const textOf = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)

/** At most {@link ERROR_BYTES} bytes of `text`, never cut inside a UTF-8 character. */
export const cutUtf8 = (text: string, maxBytes: number = ERROR_BYTES): string => {
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, "utf8") <= maxBytes) return text
  const bytes = Buffer.from(text, "utf8")
  let cut = maxBytes
  // Step back while the first byte left out continues a character (10xxxxxx).
  while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--
  return bytes.toString("utf8", 0, cut)
}

/** The facts of a parsed document (any JSON value). */
export const searchFactsOfValue = (doc: unknown): JobOrderSearchFacts => {
  const states = field(doc, "State")
  const main = textOf(field(field(first(states, 0), "StateText"), "Text"))
  const sub = main === undefined ? undefined : textOf(field(field(first(states, 1), "StateText"), "Text"))
  const state = main === undefined ? "" : sub === undefined ? main : `${main}_${sub}`
  const workMaster = textOf(field(first(field(field(doc, "JobOrder"), "WorkMasterID"), 0), "ID")) ?? ""
  const comment = state === "Aborted" ? textOf(field(doc, "Comment")) : undefined
  return { state, workMaster, error: comment === undefined ? "" : cutUtf8(comment) }
}

/**
 * The search facts of job order document `text` (checked JSON: the check's parse is reused), or
 * `undefined` when the script must read them itself (a text cjson might read otherwise).
 */
export const jobOrderSearchFacts = (text: string): JobOrderSearchFacts | undefined => {
  if (!cjsonReads(text)) return undefined
  let doc = takeParsed(text)
  if (doc === undefined) {
    try {
      doc = JSON.parse(text)
    } catch {
      return undefined
    }
  }
  return searchFactsOfValue(doc)
}
