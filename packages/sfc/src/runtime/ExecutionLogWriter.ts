import { Chunk, Context, Effect, Layer, Metric, Option, Queue } from "effect"
import {
  boundDetail,
  type CommitRequest,
  ExecutionLogStore,
  executionText,
  LOG_RECORD_VERSION,
  type LogValue,
  makeValkey,
  nodeText,
  Valkey
} from "@microdcs/store"
import { KeyPartError, nodeSeqPart } from "@microdcs/keyschema"
import type { LogWrite } from "../engine/ExecutionLog.js"
import { BoundedMap } from "./BoundedMap.js"

/**
 * Log writes dropped instead of written (queue full, Valkey slow or down, a key out of range).
 * Named like the storage role's counters (`microdcs_execution_log_*_total`), so the daemon's
 * `/metrics` shows it under this name.
 */
export const executionLogDroppedCounter = Metric.counter("microdcs_execution_log_dropped_total", {
  description: "Execution log writes the engine dropped instead of waiting (queue full, Valkey slow or down)",
  incremental: true
})

/** How the writer of one engine process behaves (from `EngineOptions`). */
export interface ExecutionLogSettings {
  /** Log writes waiting at most; beyond, new ones are dropped and counted (0: every write is dropped). */
  readonly queueSize: number
  /** Executions kept in Valkey; the oldest beyond are removed every 100th open. */
  readonly cap: number
  /** A node's detail (result, reply, error) is cut to this many bytes of JSON, with a marker. */
  readonly detailBytes: number
}

/** What the writer of this process did so far. */
export interface ExecutionLogStats {
  readonly installed: boolean
  readonly queued: number
  readonly written: number
  readonly dropped: number
  readonly commits: number
  readonly opened: number
  readonly removed: number
}

interface QueuedWrite {
  readonly scope: string
  readonly write: LogWrite
}

/**
 * A node's detail within `maxBytes` per field: the core's details are small objects (type,
 * correlation id, sends) with one field that can be large (a result, an error), so that field is
 * cut and the rest stays readable; anything else is cut as a whole.
 */
const bounded = (detail: unknown, maxBytes: number): unknown =>
  typeof detail === "object" && detail !== null && !Array.isArray(detail)
    ? Object.fromEntries(Object.entries(detail).map(([field, value]) => [field, boundDetail(value, maxBytes)]))
    : boundDetail(detail, maxBytes)

/** Writes per pipelined batch. */
const BATCH_SIZE = 512
/** Key prefixes of the executions written last, kept between batches. */
const PREFIXES_KEPT = 10_000
/** Retention runs on every this many opened executions (execution-log.md §1). */
const RETAIN_EVERY = 100
/** A batch that takes longer is given up (dropped and counted): the next one may find Valkey back. */
const BATCH_TIMEOUT = "5 seconds"
/** At shutdown, what is still queued gets this long to be written. */
const DRAIN_TIMEOUT = "2 seconds"

/**
 * The engine's execution log writer (execution-log.md §1): after a successful CAS the runtime
 * appends the core's log writes here, without waiting; one background fiber writes them in
 * pipelined batches through `ExecutionLogStore`, hands each closed execution's keys to
 * `dag:commits:{scope}` and applies retention. Under pressure writes are dropped and counted,
 * never waited for: the log is best effort. Until `install` (the engine processes, when the log
 * is on) appends are ignored, and the core is given no execution ids.
 */
export class ExecutionLogWriter extends Effect.Service<ExecutionLogWriter>()("@microdcs/sfc/ExecutionLogWriter", {
  dependencies: [ExecutionLogStore.Default],
  effect: Effect.gen(function* () {
    const shared = yield* ExecutionLogStore
    const valkey = yield* Valkey
    // The store the fiber writes through: a connection of its own once installed, so a log
    // batch never queues in front of the engine's state writes on the shared connection.
    let store = shared
    let queue: Queue.Queue<QueuedWrite> | undefined
    let settings: ExecutionLogSettings = { queueSize: 0, cap: 0, detailBytes: 0 }
    const counts = { written: 0, dropped: 0, commits: 0, opened: 0, removed: 0 }

    const drop = (n: number) =>
      Effect.suspend(() => {
        counts.dropped += n
        return Metric.incrementBy(executionLogDroppedCounter, n)
      })

    /** Whether the log is being written: only then does the runtime give executions ids. */
    const enabled = (): boolean => queue !== undefined

    /** Queues the writes of one CAS; what does not fit is dropped and counted. Never waits. */
    const append = (scope: string, writes: ReadonlyArray<LogWrite>): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (queue === undefined || writes.length === 0) return Effect.void
        if (settings.queueSize <= 0) return drop(writes.length)
        let dropped = 0
        for (const write of writes) if (!queue.unsafeOffer({ scope, write })) dropped++
        return dropped > 0 ? drop(dropped) : Effect.void
      })

    /** The key prefix of one execution, `{prefix}:dag:log:{executionId}:` (the store's keys, built without an effect). */
    const prefixes = new BoundedMap<string, string | undefined>(PREFIXES_KEPT)
    const prefixOf = (executionId: string): string | undefined => {
      if (prefixes.has(executionId)) return prefixes.get(executionId)
      const key = valkey.keys.key("executionLogExec", { executionId })
      const prefix = key instanceof KeyPartError ? undefined : key.slice(0, key.length - "exec".length)
      prefixes.set(executionId, prefix)
      return prefix
    }
    const nodeKeyOf = (prefix: string, seq: number): string | undefined => {
      const part = nodeSeqPart(seq)
      return part instanceof KeyPartError ? undefined : `${prefix}n:${part}`
    }

    /** The values, opened executions and commit requests of one batch; plain code, no effect per write. */
    const encode = (batch: ReadonlyArray<QueuedWrite>) => {
      // A key written twice in one batch (a node opened, then closed; a record rewritten) is
      // written once, with its last value: under load batches grow and the log costs less per step.
      const values = new Map<string, LogValue>()
      const opened: Array<{ readonly executionId: string; readonly openedAt: number }> = []
      const commits: Array<CommitRequest> = []
      let unwritable = 0
      for (const { scope, write } of batch) {
        const executionId = write.type === "node" ? write.executionId : write.record.executionId
        const prefix = prefixOf(executionId)
        const key = prefix === undefined ? undefined : write.type === "node" ? nodeKeyOf(prefix, write.node.seq) : `${prefix}exec`
        if (prefix === undefined || key === undefined) {
          unwritable++
          continue
        }
        if (write.type === "node") {
          const node = write.node.detail === undefined ? write.node : { ...write.node, detail: bounded(write.node.detail, settings.detailBytes) }
          values.set(key, { key, value: nodeText({ v: LOG_RECORD_VERSION, ...node }) })
          continue
        }
        const { record } = write
        values.set(key, { key, value: executionText({ v: LOG_RECORD_VERSION, ...record }) })
        if (write.opened) opened.push({ executionId, openedAt: record.openedAt })
        // Closed: its keys (never its entries) go to the storage role, after the values above.
        if (record.status !== "running") {
          const keys = [key]
          for (let seq = 0; seq <= record.lastSeq; seq++) {
            const node = nodeKeyOf(prefix, seq)
            if (node !== undefined) keys.push(node)
          }
          commits.push({ scope, keys })
        }
      }
      return { values: [...values.values()], opened, commits, unwritable }
    }

    const retain = Effect.gen(function* () {
      const removed = yield* store.retain(settings.cap)
      counts.removed += removed.length
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("execution log retention failed", cause)))

    /** Writes one batch in one pipeline, then its commit requests in another. */
    const flush = (batch: ReadonlyArray<QueuedWrite>) =>
      Effect.gen(function* () {
        const { values, opened, commits, unwritable } = encode(batch)
        if (unwritable > 0) yield* drop(unwritable)
        yield* store.write(values, opened)
        counts.written += values.length
        if (commits.length > 0) yield* store.commitAll(commits)
        counts.commits += commits.length
        const before = counts.opened
        counts.opened += opened.length
        if (Math.floor(counts.opened / RETAIN_EVERY) > Math.floor(before / RETAIN_EVERY)) yield* retain
      }).pipe(
        Effect.timeout(BATCH_TIMEOUT),
        Effect.catchAllCause((cause) =>
          Effect.zipRight(drop(batch.length), Effect.logWarning("execution log batch dropped", cause).pipe(Effect.annotateLogs({ writes: batch.length })))
        )
      )

    /**
     * Starts writing for the life of the current scope. At its end, appends stop and what is
     * still queued gets a short while to be written.
     */
    const install = (next: ExecutionLogSettings) =>
      Effect.gen(function* () {
        const installed = yield* Queue.dropping<QueuedWrite>(Math.max(1, next.queueSize))
        const options = { ...valkey.options, connectionName: `${valkey.options.connectionName ?? "microdcs"}-execution-log` }
        const own = yield* Layer.build(ExecutionLogStore.Default.pipe(Layer.provide(Layer.scoped(Valkey, makeValkey(options))))).pipe(
          Effect.map((context) => Context.get(context, ExecutionLogStore)),
          // Best effort like the rest of the log: without a connection of its own it shares the engine's.
          Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("execution log: no connection of its own, sharing the engine's", cause), shared))
        )
        yield* Effect.acquireRelease(
          Effect.sync(() => {
            settings = next
            store = own
            queue = installed
          }),
          () =>
            Effect.gen(function* () {
              if (queue === installed) queue = undefined
              const rest = Chunk.toReadonlyArray(yield* Queue.takeAll(installed))
              for (let i = 0; i < rest.length; i += BATCH_SIZE) yield* flush(rest.slice(i, i + BATCH_SIZE))
            }).pipe(Effect.timeout(DRAIN_TIMEOUT), Effect.ignore)
        )
        // Forked after the release above is registered, so the fiber stops before the drain runs.
        yield* Effect.forkScoped(
          Queue.takeBetween(installed, 1, BATCH_SIZE).pipe(
            Effect.flatMap((batch) => flush(Chunk.toReadonlyArray(batch))),
            Effect.forever
          )
        )
      })

    const stats = (): ExecutionLogStats => ({
      installed: queue !== undefined,
      // A queue's size counts a waiting taker as -1.
      queued: queue === undefined ? 0 : Math.max(0, Option.getOrElse(queue.unsafeSize(), () => 0)),
      ...counts
    })

    return { enabled, append, install, stats } as const
  })
}) {}
