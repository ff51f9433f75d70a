import { defineKeyFamilies, keyFamilies } from "@microdcs/keyschema"
import { repairJobResponseFailed } from "@microdcs/lua-scripts"
import { documentIndexedFamily } from "./IndexDocumentFamily.js"
import type { IndexedFamily } from "./IndexedFamily.js"
import type { DocumentFinding } from "./IndexDocumentInspection.js"

/** The normalized job response states that put a response in its scope's failed set. */
export const failedResponseStates: ReadonlyArray<string> = ["Aborted"]

// Only to name the families for the spec: both are core, so the registry registers nothing new.
const families = defineKeyFamilies({ jobResponse: keyFamilies.jobResponse, jobResponseFailed: keyFamilies.jobResponseFailed })

/** The failed-set score a response's `end` field implies; `undefined` (any score stands) without one. */
const endScore = (end: string | null | undefined): number | undefined => {
  const n = end === null || end === undefined || end === "" ? Number.NaN : Number(end)
  return Number.isFinite(n) ? n : undefined
}

/**
 * The `jobresponse:failed:{scope}` sets as index maintenance checks and rebuilds them: a job
 * response in a failure state belongs in its scope's set, scored by its `end` field; nothing
 * else does. The put, delete and SFC create scripts keep it; this family finds and repairs drift.
 * It walks the job response documents a second time (after the core `jobresponse` phase), reading
 * three fields of each.
 */
const spec = documentIndexedFamily({
  name: "jobresponse-failed",
  keyFamilies: families,
  document: "jobResponse",
  fields: ["state", "end"],
  indexes: {
    jobResponseFailed: { type: "zset", belongsWhen: (parts) => [["scope", parts["scope"] ?? ""], ["state", "Aborted"]] }
  },
  entriesOf: (response) =>
    failedResponseStates.includes(response.fields["state"] ?? "")
      ? [{ index: "jobResponseFailed", parts: { scope: response.scope }, score: endScore(response.fields["end"]) }]
      : [],
  repair: ({ valkey, document, entries }) =>
    valkey.script(
      repairJobResponseFailed,
      { doc: document.key, failed: entries[0]?.key ?? document.key },
      { id: document.id, version: document.version, scope: document.scope, score: entries[0]?.score === undefined ? "" : String(entries[0].score) }
    )
})

/** The failed-set family: its key families are core ones already on every island's schema. */
export const jobResponseFailedFamily: IndexedFamily<DocumentFinding> = { ...spec, keyFamilies: undefined }

