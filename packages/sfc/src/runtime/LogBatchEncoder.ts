import { boundDetail, type CommitRequest, executionText, LOG_RECORD_VERSION, type LogValue, nodeText } from "@microdcs/store"
import { KeyPartError, nodeSeqPart } from "@microdcs/keyschema"
import type { LogNode, LogWrite } from "../engine/ExecutionLog.js"
import { BoundedMap } from "./BoundedMap.js"
import type { QueuedWrites } from "./LogWriteQueue.js"

/** What the writer sends for one batch. */
export interface EncodedBatch {
  /** One value per key: the last write of each key in the batch. */
  readonly values: ReadonlyArray<LogValue>
  readonly opened: ReadonlyArray<{ readonly executionId: string; readonly openedAt: number }>
  readonly commits: ReadonlyArray<CommitRequest>
  /** Writes whose key cannot be built (an execution id or sequence number out of range). */
  readonly unwritable: number
}

/** Key prefixes of the executions written last, kept between batches. */
const PREFIXES_KEPT = 10_000

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

/**
 * A node's text (the store's `NodeRecord`). One JSON pass when the whole text is surely within
 * the bound (then so is its detail); else the detail is measured, and cut field by field only
 * when it does not fit.
 */
const nodeTextOf = (node: LogNode, maxBytes: number): string => {
  const text = nodeText({ v: LOG_RECORD_VERSION, ...node })
  if (node.detail === undefined || text.length * 3 <= maxBytes) return text
  const detailText = JSON.stringify(node.detail)
  return detailText === undefined || fits(detailText, maxBytes) ? text : nodeText({ v: LOG_RECORD_VERSION, ...node, detail: bounded(node.detail, maxBytes) })
}

/**
 * Turns the queued writes of one batch into what the store writes, in the writer's fiber (never
 * on the CAS path). A key written more than once in the batch (a node opened, then closed; an
 * execution record rewritten) is encoded and written once, with its last value: the more a batch
 * holds, the less the log costs per step.
 */
export class LogBatchEncoder {
  /** `{prefix}:dag:log:{executionId}:` per execution, or undefined when its key cannot be built. */
  private readonly prefixes = new BoundedMap<string, string | undefined>(PREFIXES_KEPT)

  constructor(
    /** The full `exec` key of an execution, or the reason it cannot be built. */
    private readonly execKeyOf: (executionId: string) => string | KeyPartError,
    private readonly detailBytes: number
  ) {}

  private prefixOf(executionId: string): string | undefined {
    const known = this.prefixes.get(executionId)
    if (known !== undefined || this.prefixes.has(executionId)) return known
    const key = this.execKeyOf(executionId)
    const prefix = key instanceof KeyPartError ? undefined : key.slice(0, key.length - "exec".length)
    this.prefixes.set(executionId, prefix)
    return prefix
  }

  private static nodeKey(prefix: string, seq: number): string | undefined {
    const part = nodeSeqPart(seq)
    return part instanceof KeyPartError ? undefined : `${prefix}n:${part}`
  }

  encode(batch: ReadonlyArray<QueuedWrites>): EncodedBatch {
    // The last write of each key; Map order is the order of first writes, so nodes stay in run order.
    const last = new Map<string, LogWrite>()
    const opened: Array<{ readonly executionId: string; readonly openedAt: number }> = []
    const commits: Array<CommitRequest> = []
    let unwritable = 0
    for (const { scope, writes } of batch) {
      for (const write of writes) {
        const executionId = write.type === "node" ? write.executionId : write.record.executionId
        const prefix = this.prefixOf(executionId)
        const key = prefix === undefined ? undefined : write.type === "node" ? LogBatchEncoder.nodeKey(prefix, write.node.seq) : `${prefix}exec`
        if (prefix === undefined || key === undefined) {
          unwritable++
          continue
        }
        last.set(key, write)
        if (write.type === "node") continue
        const { record } = write
        if (write.opened) opened.push({ executionId, openedAt: record.openedAt })
        // Closed: its keys (never its entries) go to the storage role, after the values above.
        if (record.status !== "running") {
          const keys = [key]
          for (let seq = 0; seq <= record.lastSeq; seq++) {
            const node = LogBatchEncoder.nodeKey(prefix, seq)
            if (node !== undefined) keys.push(node)
          }
          commits.push({ scope, keys })
        }
      }
    }
    const values: Array<LogValue> = []
    for (const [key, write] of last) {
      values.push({
        key,
        value: write.type === "node" ? nodeTextOf(write.node, this.detailBytes) : executionText({ v: LOG_RECORD_VERSION, ...write.record })
      })
    }
    return { values, opened, commits, unwritable }
  }
}
