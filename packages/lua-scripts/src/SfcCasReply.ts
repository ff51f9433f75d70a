import { asInteger, asText } from "./Reply.js"

/** The `ok` reply of one job's compare-and-set (sfc-cas, and each job of sfc-cas-many). */
export interface SfcCasOk {
  readonly status: "ok"
  readonly version: number
  readonly entryIds: ReadonlyArray<string>
  /** With a job order key in the trailer: its `doc` after the write (`null` when missing); absent otherwise. */
  readonly jobOrderDoc?: string | null
  /** With a job order move: the job order's version after it, 0 when it was not written; absent otherwise. */
  readonly jobOrderVersion?: number
  /** With a job response: 1 when it was created, 0 when not; absent otherwise. */
  readonly responseVersion?: number
}

/** Decodes `{"ok", version, entryId..., ["moved", v], ["responded", v], ["joborder", doc]}` (the status already read). */
export const decodeCasOk = (script: string, reply: ReadonlyArray<unknown>): SfcCasOk => {
  const version = asInteger(script, reply[1])
  // Stream ids never read "joborder", "responded" or "moved", so a marker cannot be taken for an entry id.
  let end = reply.length
  const trailer: { jobOrderDoc?: string | null; jobOrderVersion?: number; responseVersion?: number } = {}
  if (end >= 4 && reply[end - 2] === "joborder") {
    const doc = reply[end - 1]
    trailer.jobOrderDoc = doc === null || doc === undefined ? null : asText(script, doc)
    end -= 2
  }
  if (end >= 4 && reply[end - 2] === "responded") {
    trailer.responseVersion = asInteger(script, reply[end - 1])
    end -= 2
  }
  if (end >= 4 && reply[end - 2] === "moved") {
    trailer.jobOrderVersion = asInteger(script, reply[end - 1])
    end -= 2
  }
  return { status: "ok", version, entryIds: reply.slice(2, end).map((id) => asText(script, id)), ...trailer }
}
