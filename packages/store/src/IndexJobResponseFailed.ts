import { Effect } from "effect"
import { defineKeyFamilies, KeyPartError, keyFamilies } from "@microdcs/keyschema"
import { repairJobResponseFailed } from "@microdcs/lua-scripts"
import { documentIndexedFamily } from "./IndexDocumentFamily.js"
import type { IndexedDocument } from "./IndexDocumentSpec.js"
import type { IndexedFamily } from "./IndexedFamily.js"
import type { DocumentFinding } from "./IndexDocumentInspection.js"
import { type PipelinedRead, pipelined, textCell, wrongTypeCell } from "./IndexReads.js"
import type { ValkeyService } from "./Valkey.js"

/** The normalized job response states that put a response in its scope's failed set (while its job order is live). */
export const failedResponseStates: ReadonlyArray<string> = ["Aborted"]

// Only to name the families for the spec: both are core, so the registry registers nothing new.
const families = defineKeyFamilies({ jobResponse: keyFamilies.jobResponse, jobResponseFailed: keyFamilies.jobResponseFailed })

/** The failed-set score a response's `end` field implies; `undefined` (any score stands) without one. */
const endScore = (end: string | null | undefined): number | undefined => {
  const n = end === null || end === undefined || end === "" ? Number.NaN : Number(end)
  return Number.isFinite(n) ? n : undefined
}

/** A key of the scope, or `fallback` when the scope forms none (the document is then malformed anyway). */
const scopeKey = (valkey: ValkeyService, family: "jobResponseFailed" | "jobOrderList", scope: string, fallback: string): string => {
  const key = valkey.keys.key(family, { scope })
  return key instanceof KeyPartError ? fallback : key
}

const isFailed = (document: IndexedDocument) => failedResponseStates.includes(document.fields["state"] ?? "")

/** Whether each document's job order is listed (live) in its scope: one ZSCORE per failed response. */
const orderLiveness = (valkey: ValkeyService, documents: ReadonlyArray<IndexedDocument>) =>
  Effect.gen(function* () {
    const asked = documents.filter((d) => isFailed(d) && (d.fields["order"] ?? "") !== "")
    const reads = asked.map((d): PipelinedRead => (p) => p.zscore(scopeKey(valkey, "jobOrderList", d.scope, d.key), d.fields["order"]!))
    const cells = yield* pipelined(valkey, "read failed responses' job orders", reads)
    // A list of the wrong type is the core job order phase's finding; the order counts as live.
    const live = new Map(asked.map((d, i) => [d.id, cells[i] === wrongTypeCell || textCell(cells[i]) !== null] as const))
    return documents.map((d) => ({ orderLive: live.get(d.id) === true ? "1" : null }))
  })

/**
 * The `jobresponse:failed:{scope}` sets as index maintenance checks and rebuilds them: a job
 * response in a failure state belongs in its scope's set, scored by its `end` field, while its
 * job order is listed in the scope (live); a retired (Clear, Cancel) or deleted order ends the
 * incident, and its responses do not belong. Nothing else does. The job response and job order
 * write scripts keep it; this family finds and repairs drift. It walks the job response documents
 * a second time (after the core `jobresponse` phase), reading four fields of each and the job
 * order listing of each failed one.
 */
const spec = documentIndexedFamily({
  name: "jobresponse-failed",
  keyFamilies: families,
  document: "jobResponse",
  fields: ["state", "end", "order"],
  related: orderLiveness,
  indexes: {
    jobResponseFailed: { type: "zset", belongsWhen: (parts) => [["scope", parts["scope"] ?? ""], ["state", "Aborted"]] }
  },
  entriesOf: (response) =>
    isFailed(response)
      ? [{
          index: "jobResponseFailed",
          parts: { scope: response.scope },
          score: endScore(response.fields["end"]),
          absent: response.fields["orderLive"] !== "1"
        }]
      : [],
  repair: ({ valkey, document, entries }) =>
    valkey.script(
      repairJobResponseFailed,
      {
        doc: document.key,
        failed: entries[0]?.key ?? scopeKey(valkey, "jobResponseFailed", document.scope, document.key),
        orders: scopeKey(valkey, "jobOrderList", document.scope, document.key)
      },
      { id: document.id, version: document.version, scope: document.scope, score: entries[0]?.score === undefined ? "" : String(entries[0].score) }
    )
})

/** The failed-set family: its key families are core ones already on every island's schema. */
export const jobResponseFailedFamily: IndexedFamily<DocumentFinding> = { ...spec, keyFamilies: undefined }
