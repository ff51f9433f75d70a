import type { KeyPartError } from "@microdcs/keyschema"
import { InvalidInput } from "./Errors.js"

/**
 * The shape of the execution log's keys as the store checks them on every write, from plain code
 * (no regular expression over the whole key, no Effect per key), and the chunking of key lists.
 */

/** A node key's suffix after its execution's part: `n:` and six digits. */
const NODE_SUFFIX_LENGTH = "n:000000".length
const COLON = 58
const LETTER_N = 110
const DIGIT_0 = 48
const DIGIT_9 = 57

/** Whether `key` ends in `:n:` and six digits (char by char: no slice, no regular expression). */
const endsLikeNode = (key: string): boolean => {
  const cut = key.length - NODE_SUFFIX_LENGTH
  if (cut <= 0 || key.charCodeAt(cut - 1) !== COLON || key.charCodeAt(cut) !== LETTER_N || key.charCodeAt(cut + 1) !== COLON) return false
  for (let i = cut + 2; i < key.length; i++) {
    const c = key.charCodeAt(i)
    if (c < DIGIT_0 || c > DIGIT_9) return false
  }
  return true
}

/**
 * The execution's part of a log key (through the ':' before `exec` or `n:{seq}`), or undefined
 * for any other shape; read from the end, without a regular expression over the whole key.
 */
export const executionPartOf = (key: string): string | undefined => {
  if (key.endsWith(":exec")) return key.slice(0, key.length - "exec".length)
  return endsLikeNode(key) ? key.slice(0, key.length - NODE_SUFFIX_LENGTH) : undefined
}

/** Execution parts whose keys this store has checked, kept between writes (a running execution is written many times). */
const CHECKED_KEPT = 10_000

/** A bounded set, oldest first out: the executions checked last. */
export class CheckedExecutions {
  private readonly parts = new Set<string>()
  has(part: string): boolean {
    return this.parts.has(part)
  }
  add(part: string): void {
    if (this.parts.has(part)) return
    this.parts.add(part)
    if (this.parts.size > CHECKED_KEPT) this.parts.delete(this.parts.values().next().value!)
  }
}

/** Keys per MGET/DEL: bounded replies, one round trip for most executions. */
export const CHUNK = 1000

export const chunks = <A>(items: ReadonlyArray<A>): ReadonlyArray<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK))
  return out
}

/** The store's error for a key part the schema refuses (an execution id or sequence number out of range). */
export const keyPartInvalid = (e: KeyPartError): InvalidInput => new InvalidInput({ field: e.name, message: e.message })
