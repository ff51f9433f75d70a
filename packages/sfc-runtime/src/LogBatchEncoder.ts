import type { CommitRequest, LogValue } from "@microdcs/store"
import { isNodeSeq, KeyPartError, nodeSeqPart } from "@microdcs/keyschema"
import type { LogExecutionRecord, LogWrite } from "@microdcs/sfc"
import { BoundedMap } from "./BoundedMap.js"
import type { QueuedWrites } from "./LogWriteQueue.js"
import { executionRecordHead, executionRecordText, nodeRecordText, sameHead } from "./LogRecordText.js"

/** What the writer sends for one batch. */
export interface EncodedBatch {
  /** One value per key: the last write of each key in the batch. */
  readonly values: ReadonlyArray<LogValue>
  /** The executions opened in the batch (retention runs on every 100th open). */
  readonly opened: ReadonlyArray<ListedExecution>
  /**
   * Every execution whose record the batch writes, opened or not: the store lists each one that is
   * not listed yet, so no record is ever outside `dag:log:executions` (where retention finds it),
   * even when the batch that opened it was dropped or its place was removed meanwhile.
   */
  readonly executions: ReadonlyArray<ListedExecution>
  readonly commits: ReadonlyArray<CommitRequest>
  /** Writes whose key cannot be built (an execution id or sequence number out of range). */
  readonly unwritable: number
}

/** An execution as `dag:log:executions` lists it: its id and open time (ms). */
export interface ListedExecution {
  readonly executionId: string
  readonly openedAt: number
}

/** Running executions written last whose key prefix and record head are kept between batches (closed ones are forgotten). */
const EXECUTIONS_KEPT = 10_000

/** What the encoder keeps of one execution between batches. */
interface KnownExecution {
  /** `{prefix}:dag:log:{executionId}:`, or undefined when its key cannot be built. */
  readonly prefix: string | undefined
  /** The text of its record's fields that never change, and the record it was built from. */
  head?: { readonly of: LogExecutionRecord; readonly text: string }
}

/** One execution's keys in a batch: where each sequence number's last write is (-1: the record). */
interface BatchExecution {
  readonly known: KnownExecution
  readonly at: Map<number, number>
}

/** The last write of one key, with the execution it belongs to. */
interface LastWrite {
  readonly known: KnownExecution
  write: LogWrite
}

const EXEC_SLOT = -1

/**
 * Turns the queued writes of one batch into what the store writes, in the writer's fiber (never
 * on the CAS path). A key written more than once in the batch (a node opened, then closed; an
 * execution record rewritten) is encoded and written once, with its last value: the more a batch
 * holds, the less the log costs per step. Keys and texts are built only for those last writes;
 * an execution's record repeats a head of text built once per execution.
 */
export class LogBatchEncoder {
  private readonly executions = new BoundedMap<string, KnownExecution>(EXECUTIONS_KEPT)

  constructor(
    /** The full `exec` key of an execution, or the reason it cannot be built. */
    private readonly execKeyOf: (executionId: string) => string | KeyPartError,
    private readonly detailBytes: number
  ) {}

  /** How many executions' prefixes and heads are kept: running ones written lately. */
  get remembered(): number {
    return this.executions.size
  }

  private knownOf(executionId: string): KnownExecution {
    const known = this.executions.get(executionId)
    if (known !== undefined) return known
    const key = this.execKeyOf(executionId)
    const added: KnownExecution = { prefix: key instanceof KeyPartError ? undefined : key.slice(0, key.length - "exec".length) }
    this.executions.set(executionId, added)
    return added
  }

  private static nodeKey(prefix: string, seq: number): string | undefined {
    const part = nodeSeqPart(seq)
    return part instanceof KeyPartError ? undefined : `${prefix}n:${part}`
  }

  private recordText(known: KnownExecution, record: LogExecutionRecord): string {
    if (known.head === undefined || !sameHead(known.head.of, record)) known.head = { of: record, text: executionRecordHead(record) }
    return executionRecordText(known.head.text, record)
  }

  encode(batch: ReadonlyArray<QueuedWrites>): EncodedBatch {
    // The last write of each key, in the order of first writes (so nodes stay in run order).
    const last: Array<LastWrite> = []
    const inBatch = new Map<string, BatchExecution>()
    const opened: Array<ListedExecution> = []
    const commits: Array<CommitRequest> = []
    let unwritable = 0
    for (const { scope, writes } of batch) {
      for (const write of writes) {
        const executionId = write.type === "node" ? write.executionId : write.record.executionId
        let execution = inBatch.get(executionId)
        if (execution === undefined) {
          execution = { known: this.knownOf(executionId), at: new Map() }
          inBatch.set(executionId, execution)
        }
        const { known } = execution
        const prefix = known.prefix
        const slot = write.type === "node" ? write.node.seq : EXEC_SLOT
        if (prefix === undefined || (slot !== EXEC_SLOT && !isNodeSeq(slot))) {
          unwritable++
          continue
        }
        const at = execution.at.get(slot)
        if (at === undefined) {
          execution.at.set(slot, last.length)
          last.push({ known, write })
        } else last[at]!.write = write
        if (write.type === "node") continue
        const { record } = write
        if (write.opened) opened.push({ executionId, openedAt: record.openedAt })
        // Closed: its keys (never its entries) go to the storage role, after the values above.
        if (record.status !== "running") commits.push({ scope, keys: LogBatchEncoder.commitKeys(prefix, record.lastSeq) })
      }
    }
    return { ...this.valuesOf(last), opened, commits, unwritable }
  }

  /** The keys a closed execution hands over: its record's and those of nodes `0..lastSeq`. */
  private static commitKeys(prefix: string, lastSeq: number): Array<string> {
    const keys = [`${prefix}exec`]
    for (let seq = 0; seq <= lastSeq; seq++) {
      const node = LogBatchEncoder.nodeKey(prefix, seq)
      if (node !== undefined) keys.push(node)
    }
    return keys
  }

  /** The values of the last writes, encoded, and the executions whose records they hold. */
  private valuesOf(last: ReadonlyArray<LastWrite>): Pick<EncodedBatch, "values" | "executions"> {
    const values: Array<LogValue> = []
    const executions: Array<ListedExecution> = []
    for (const { known, write } of last) {
      const prefix = known.prefix!
      if (write.type === "exec") {
        values.push({ key: `${prefix}exec`, value: this.recordText(known, write.record) })
        executions.push({ executionId: write.record.executionId, openedAt: write.record.openedAt })
        // A closed execution is written no more: kept, it held its head until 10,000 others came.
        if (write.record.status !== "running") this.executions.delete(write.record.executionId)
        continue
      }
      const key = LogBatchEncoder.nodeKey(prefix, write.node.seq)
      if (key !== undefined) values.push({ key, value: nodeRecordText(write.node, this.detailBytes) })
    }
    return { values, executions }
  }
}
