import { boundDetail, LOG_RECORD_VERSION } from "@microdcs/store"
import type { LogExecutionRecord, LogNode } from "@microdcs/sfc"

/**
 * The JSON text of the log's records (the store's `NodeRecord` and `ExecutionRecord`), built by
 * hand in the writer's fiber: the same text `JSON.stringify({ v: 1, ...record })` gives for the
 * records the core writes (fields in the record's order, absent ones left out), without the
 * spread copy of every record, and the detail stringified once. Strings go through
 * `JSON.stringify` (its escaping); numbers through `String`, which is JSON's text for finite ones.
 */

const num = (n: number): string => (Number.isFinite(n) ? String(n) : "null")

/**
 * A node's detail within `maxBytes` per field: the core's details are small objects (type,
 * correlation id, sends) with one field that can be large (a result, an error), so that field is
 * cut and the rest stays readable; anything else is cut as a whole.
 */
const bounded = (detail: unknown, maxBytes: number): unknown =>
  typeof detail === "object" && detail !== null && !Array.isArray(detail)
    ? Object.fromEntries(Object.entries(detail).map(([field, value]) => [field, boundDetail(value, maxBytes)]))
    : boundDetail(detail, maxBytes)

/** Whether JSON text is within `maxBytes` of UTF-8 (a UTF-16 unit is at most 3 bytes: most texts need no count). */
const fits = (text: string, maxBytes: number): boolean => text.length * 3 <= maxBytes || Buffer.byteLength(text, "utf8") <= maxBytes

/** A node's text; its detail is measured and, only when it does not fit `maxBytes`, cut field by field. */
export const nodeRecordText = (node: LogNode, maxBytes: number): string => {
  let text = `{"v":${LOG_RECORD_VERSION},"seq":${num(node.seq)},"kind":${JSON.stringify(node.kind)},"name":${JSON.stringify(node.name)}`
  if (node.visit !== undefined) text += `,"visit":${num(node.visit)}`
  text += `,"openedAt":${num(node.openedAt)}`
  if (node.closedAt !== undefined) text += `,"closedAt":${num(node.closedAt)}`
  if (node.children !== undefined) text += `,"children":${JSON.stringify(node.children)}`
  if (node.detail !== undefined) {
    const detail = JSON.stringify(node.detail) as string | undefined
    // A detail JSON leaves out (a function, a symbol) is left out here too.
    if (detail !== undefined) text += `,"detail":${fits(detail, maxBytes) ? detail : JSON.stringify(bounded(node.detail, maxBytes))}`
  }
  return `${text}}`
}

/** The fields an execution record repeats on every write, as text (through `parent`). */
export const executionRecordHead = (record: LogExecutionRecord): string =>
  `{"v":${LOG_RECORD_VERSION},"executionId":${JSON.stringify(record.executionId)},"jobId":${JSON.stringify(record.jobId)}` +
  `,"scope":${JSON.stringify(record.scope)},"workMasterId":${JSON.stringify(record.workMasterId)},"recipeDigest":${JSON.stringify(record.recipeDigest)}` +
  (record.parent !== undefined ? `,"parent":${JSON.stringify(record.parent)}` : "")

/** Whether a head built from `head` is the head of `record` too (the same execution, identity and parent). */
export const sameHead = (head: LogExecutionRecord, record: LogExecutionRecord): boolean =>
  head.executionId === record.executionId &&
  head.jobId === record.jobId &&
  head.scope === record.scope &&
  head.workMasterId === record.workMasterId &&
  head.recipeDigest === record.recipeDigest &&
  head.parent?.executionId === record.parent?.executionId &&
  head.parent?.seq === record.parent?.seq

/** An execution record's text: its head (built once per execution by the caller) and the fields that change. */
export const executionRecordText = (head: string, record: LogExecutionRecord): string =>
  `${head},"openedAt":${num(record.openedAt)}${record.closedAt !== undefined ? `,"closedAt":${num(record.closedAt)}` : ""}` +
  `,"status":${JSON.stringify(record.status)},"lastSeq":${num(record.lastSeq)}}`
