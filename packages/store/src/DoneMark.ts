import { dedupeHash, KeyPartError } from "@microdcs/keyschema"
import { InvalidInput, LeaseLost } from "./Errors.js"
import { documentProblem, keyPartProblem, keyProblem } from "./DocumentInput.js"
import type { ValkeyService } from "./Valkey.js"

/**
 * The done mark of a claimed CloudEvent, checked and keyed, for a write that lands it with its
 * own effect in one atomic step (`JobOrderDao.createMarkingDone`): the write then happens only
 * while `token` still holds the claim, and a duplicate of the event is answered with `reply`.
 * Built by `DedupeStore.doneMark`.
 */
export interface DoneMark {
  /** The event's dedupe key. */
  readonly key: string
  readonly token: string
  readonly ttlMs: number
  /** The reply kept with the mark (a JSON text); `undefined` keeps none. */
  readonly reply: string | undefined
}

/** The same refusal as `validatePositiveMs`, synchronously: PX rejects 0 and fractions. */
export const positiveMsProblem = (field: string, value: number): InvalidInput | undefined =>
  Number.isSafeInteger(value) && value > 0
    ? undefined
    : new InvalidInput({ field, message: `${field} must be a positive integer number of ms, got ${value}` })

/** The dedupe key of the event `source` + `id`, or why they cannot name one. */
export const dedupeKeyOf = (valkey: ValkeyService, source: string, id: string): string | InvalidInput => {
  const problem = keyPartProblem("source", source) ?? keyPartProblem("id", id)
  if (problem) return problem
  const key = valkey.keys.key("dedupe", { hash: dedupeHash(source, id) })
  return key instanceof KeyPartError ? keyProblem(key) : key
}

/** The checked done mark, or the first problem: a source or id naming no key, a bad token or TTL, a reply over the document size limit. */
export const doneMark = (valkey: ValkeyService, source: string, id: string, token: string, ttlMs: number, reply?: string): DoneMark | InvalidInput => {
  const key = dedupeKeyOf(valkey, source, id)
  if (typeof key !== "string") return key
  const problem =
    keyPartProblem("token", token) ??
    positiveMsProblem("ttlMs", ttlMs) ??
    (reply === undefined ? undefined : documentProblem("reply", reply, valkey.maxDocumentBytes))
  return problem ?? { key, token, ttlMs, reply }
}

/** A mark refused because `token` no longer holds `key`: `stored` is what the key holds (null when gone). */
export const leaseLost = (key: string, token: string, stored: string | null): LeaseLost => {
  const done = stored === "done" || stored?.startsWith("done:") === true
  const now = stored === null ? "the lease expired" : done ? "it is already done" : "another token holds it"
  return new LeaseLost({ key, message: `token ${token} no longer holds ${key}: ${now}` })
}
