import { asInteger, asText } from "./Reply.js"

/** The `ok` reply of one job's compare-and-set (sfc-cas, and each job of sfc-cas-many). */
export interface SfcCasOk {
  readonly status: "ok"
  readonly version: number
  readonly entryIds: ReadonlyArray<string>
  /**
   * With a job order key in the trailer: the job order after the write, `null` when missing;
   * absent otherwise. `doc` is left out when `version` is the one the writer said it holds.
   */
  readonly jobOrder?: SfcJobOrderRead | null
  /** With a job order move: the job order's version after it, 0 when it was not written; absent otherwise. */
  readonly jobOrderVersion?: number
  /** With a job response: 1 when it was created, 0 when not; absent otherwise. */
  readonly responseVersion?: number
}

/** The job order as a compare-and-set read it after its write. */
export interface SfcJobOrderRead {
  readonly version: number
  /** Its document; `undefined` when the version is the one the writer holds. */
  readonly doc: string | undefined
}

/** The trailer's job order read: version 0 is a missing job order. */
const jobOrderRead = (script: string, version: unknown, doc: unknown): SfcJobOrderRead | null => {
  const v = asInteger(script, version)
  if (v === 0) return null
  return { version: v, doc: doc === null || doc === undefined ? undefined : asText(script, doc) }
}

/** Decodes `{"ok", version, entryId..., ["moved", v], ["responded", v], ["joborder", v, doc]}` (the status already read). */
export const decodeCasOk = (script: string, reply: ReadonlyArray<unknown>): SfcCasOk => {
  const version = asInteger(script, reply[1])
  // Stream ids never read "joborder", "responded" or "moved", so a marker cannot be taken for an entry id.
  let end = reply.length
  const trailer: { jobOrder?: SfcJobOrderRead | null; jobOrderVersion?: number; responseVersion?: number } = {}
  if (end >= 5 && reply[end - 3] === "joborder") {
    trailer.jobOrder = jobOrderRead(script, reply[end - 2], reply[end - 1])
    end -= 3
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
