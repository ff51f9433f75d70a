import { asInteger, asText } from "./Reply.js"

/** The `ok` reply of one job's compare-and-set (sfc-cas, and each job of sfc-cas-many). */
export interface SfcCasOk {
  readonly status: "ok"
  readonly version: number
  readonly entryIds: ReadonlyArray<string>
  /** With a job order key in the trailer: its `doc` after the write (`null` when missing); absent otherwise. */
  readonly jobOrderDoc?: string | null
}

/** Decodes `{"ok", version, entryId..., ["joborder", doc]}` (the status already read). */
export const decodeCasOk = (script: string, reply: ReadonlyArray<unknown>): SfcCasOk => {
  const version = asInteger(script, reply[1])
  // Stream ids never read "joborder", so the marker cannot be taken for an entry id.
  const marked = reply.length >= 4 && reply[reply.length - 2] === "joborder"
  const ids = (marked ? reply.slice(2, -2) : reply.slice(2)).map((id) => asText(script, id))
  if (!marked) return { status: "ok", version, entryIds: ids }
  const doc = reply[reply.length - 1]
  return { status: "ok", version, entryIds: ids, jobOrderDoc: doc === null || doc === undefined ? null : asText(script, doc) }
}
