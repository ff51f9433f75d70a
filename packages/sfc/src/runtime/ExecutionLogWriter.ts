import { Context, Effect, FiberRef, Layer, Metric, type MetricLabel, Scheduler } from "effect"
import { ExecutionLogStore, makeValkey, Valkey } from "@microdcs/store"
import type { LogWrite } from "../engine/ExecutionLog.js"
import { LogBatchEncoder } from "./LogBatchEncoder.js"
import { LogWriteQueue, type QueuedWrites } from "./LogWriteQueue.js"

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

/** Writes per batch at most (whole CASes): a backlog after a slow Valkey is written in bounded steps. */
const BATCH_WRITES = 2048
/** Retention runs on every this many opened executions (execution-log.md §1). */
const RETAIN_EVERY = 100
/** A batch that takes longer is given up (dropped and counted): the next one may find Valkey back. */
const BATCH_TIMEOUT = "5 seconds"
/** At shutdown, what is still queued gets this long to be written. */
const DRAIN_TIMEOUT = "2 seconds"

/**
 * The writer's fiber runs in Node's check phase (setImmediate), after the I/O callbacks and
 * microtasks of the same turn: the engine fibers woken by replies (a CAS, a station event) go
 * first, and the log writes of every CAS of the turn make one batch.
 */
const afterIo = Scheduler.makeBatched((runBatch) => setImmediate(runBatch))

const writesIn = (batch: ReadonlyArray<QueuedWrites>): number => batch.reduce((n, queued) => n + queued.writes.length, 0)

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
    let queue: LogWriteQueue | undefined
    let settings: ExecutionLogSettings = { queueSize: 0, cap: 0, detailBytes: 0 }
    let encoder = new LogBatchEncoder(shared.execKeySync, 0)
    // The metric labels of the fiber that installs the writer (Effect.tagMetrics), as Metric.incrementBy would add them.
    let labels: ReadonlyArray<MetricLabel.MetricLabel> = []
    const counts = { written: 0, dropped: 0, commits: 0, opened: 0, removed: 0 }

    /** Counts drops from plain code: the CAS path runs no effect for the log. */
    const drop = (n: number): void => {
      if (n <= 0) return
      counts.dropped += n
      executionLogDroppedCounter.unsafeUpdate(n, labels)
    }

    /** Whether the log is being written: only then does the runtime give executions ids. */
    const enabled = (): boolean => queue !== undefined

    /** Queues the writes of one CAS, from plain code; what does not fit is dropped and counted. Never waits. */
    const offer = (scope: string, writes: ReadonlyArray<LogWrite>): void => {
      if (queue === undefined || writes.length === 0) return
      drop(queue.offer(scope, writes))
    }

    /** `offer` as an effect. */
    const append = (scope: string, writes: ReadonlyArray<LogWrite>): Effect.Effect<void> => Effect.sync(() => offer(scope, writes))

    const retain = Effect.gen(function* () {
      const removed = yield* store.retain(settings.cap)
      counts.removed += removed.length
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("execution log retention failed", cause)))

    /** Writes one batch (the CASes queued since the last one, up to `BATCH_WRITES`): its values, then its commit requests. */
    const flush = (batch: ReadonlyArray<QueuedWrites>) =>
      Effect.gen(function* () {
        const { values, opened, commits, unwritable } = encoder.encode(batch)
        drop(unwritable)
        yield* store.write(values, opened)
        counts.written += values.length
        if (commits.length > 0) yield* store.commitAll(commits)
        counts.commits += commits.length
        const before = counts.opened
        counts.opened += opened.length
        if (Math.floor(counts.opened / RETAIN_EVERY) > Math.floor(before / RETAIN_EVERY)) yield* retain
      }).pipe(
        Effect.timeout(BATCH_TIMEOUT),
        Effect.catchAllCause((cause) => {
          const writes = writesIn(batch)
          drop(writes)
          return Effect.logWarning("execution log batch dropped", cause).pipe(Effect.annotateLogs({ writes }))
        })
      )

    /**
     * Starts writing for the life of the current scope. At its end, appends stop and what is
     * still queued gets a short while to be written.
     */
    const install = (next: ExecutionLogSettings) =>
      Effect.gen(function* () {
        const installed = new LogWriteQueue(next.queueSize)
        const options = { ...valkey.options, connectionName: `${valkey.options.connectionName ?? "microdcs"}-execution-log` }
        const own = yield* Layer.build(ExecutionLogStore.Default.pipe(Layer.provide(Layer.scoped(Valkey, makeValkey(options))))).pipe(
          Effect.map((context) => Context.get(context, ExecutionLogStore)),
          // Best effort like the rest of the log: without a connection of its own it shares the engine's.
          Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("execution log: no connection of its own, sharing the engine's", cause), shared))
        )
        const installLabels = yield* FiberRef.get(FiberRef.currentMetricLabels)
        yield* Effect.acquireRelease(
          Effect.sync(() => {
            settings = next
            encoder = new LogBatchEncoder(shared.execKeySync, next.detailBytes)
            labels = installLabels
            store = own
            queue = installed
          }),
          () =>
            Effect.gen(function* () {
              if (queue === installed) queue = undefined
              while (installed.size > 0) yield* flush(installed.take(BATCH_WRITES))
            }).pipe(Effect.timeout(DRAIN_TIMEOUT), Effect.ignore)
        )
        // Forked after the release above is registered, so the fiber stops before the drain runs.
        // Each turn takes what is queued (up to a batch): while a batch is on the wire, the next one grows.
        yield* Effect.forkScoped(
          installed.waitForWrites.pipe(
            Effect.flatMap(() => flush(installed.take(BATCH_WRITES))),
            Effect.forever,
            Effect.withScheduler(afterIo)
          )
        )
      })

    const stats = (): ExecutionLogStats => ({
      installed: queue !== undefined,
      queued: queue === undefined ? 0 : queue.size,
      ...counts
    })

    return { enabled, offer, append, install, stats } as const
  })
}) {}
