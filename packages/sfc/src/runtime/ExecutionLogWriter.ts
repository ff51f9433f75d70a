import { Context, Effect, FiberRef, Layer, Metric, type MetricLabel, Scheduler } from "effect"
import { ExecutionLogStore, makeValkey, Valkey } from "@microdcs/store"
import type { LogWrite } from "../engine/ExecutionLog.js"
import { LogBatchEncoder } from "./LogBatchEncoder.js"
import { type LogRetention, makeLogRetention } from "./LogRetention.js"
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
  /** Executions kept in Valkey; the oldest closed ones beyond are removed every 100th open, never a running one. */
  readonly cap: number
  /** A node's detail (result, reply, error) is cut to this many bytes of JSON, with a marker. */
  readonly detailBytes: number
}

/** What the writer of this process did so far. */
export interface ExecutionLogStats {
  readonly installed: boolean
  /** Writes waiting, and how many may wait (`queueSize`; beyond, writes are dropped). */
  readonly queued: number
  readonly queueSize: number
  readonly written: number
  readonly dropped: number
  readonly commits: number
  readonly opened: number
  readonly removed: number
  /** Batches written, how long the last one took and the slowest so far (ms; a batch over 5 s is dropped). */
  readonly batches: number
  readonly lastBatchMs: number
  readonly slowestBatchMs: number
  /** Retention runs that failed or took too long (logged); the next run goes on. */
  readonly retentionFailures: number
}

/** Writes per batch at most (whole CASes): a backlog after a slow Valkey is written in bounded steps. */
const BATCH_WRITES = 2048
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
 * The engine's execution log writer: after a successful CAS the runtime
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
    const counts = { written: 0, dropped: 0, commits: 0, opened: 0, removed: 0, batches: 0, lastBatchMs: 0, slowestBatchMs: 0, retentionFailures: 0 }
    let retention: LogRetention | undefined

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

    /** Times a written batch (wall time, the event loop's waits included: what the 5 s budget counts). */
    const timed = (startedAt: number): void => {
      const ms = performance.now() - startedAt
      counts.batches += 1
      counts.lastBatchMs = ms
      counts.slowestBatchMs = Math.max(counts.slowestBatchMs, ms)
    }

    /**
     * Writes one batch (the CASes queued since the last one, up to `BATCH_WRITES`): its values,
     * then its commit requests. Retention is only asked for: it runs in a fiber of its own.
     */
    const flush = (batch: ReadonlyArray<QueuedWrites>) =>
      Effect.gen(function* () {
        const startedAt = performance.now()
        const { values, opened, executions, commits, unwritable } = encoder.encode(batch)
        drop(unwritable)
        yield* store.write(values, executions)
        counts.written += values.length
        if (commits.length > 0) yield* store.commitAll(commits)
        counts.commits += commits.length
        retention?.opened(counts.opened, opened.length)
        counts.opened += opened.length
        timed(startedAt)
      }).pipe(
        Effect.timeout(BATCH_TIMEOUT),
        Effect.catchAllCause((cause) => {
          const writes = writesIn(batch)
          drop(writes)
          return Effect.logWarning("execution log batch dropped", cause).pipe(Effect.annotateLogs({ writes }))
        })
      )

    /** The log's store on a Valkey connection of its own, for the life of the current scope. */
    const storeOfItsOwn = Effect.suspend(() => {
      const options = { ...valkey.options, connectionName: `${valkey.options.connectionName ?? "microdcs"}-execution-log` }
      return Layer.build(ExecutionLogStore.Default.pipe(Layer.provide(Layer.scoped(Valkey, makeValkey(options))))).pipe(
        Effect.map((context) => Context.get(context, ExecutionLogStore)),
        // Best effort like the rest of the log: without a connection of its own it shares the engine's.
        Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("execution log: no connection of its own, sharing the engine's", cause), shared))
      )
    })

    /**
     * Starts writing for the life of the current scope. At its end, appends stop and what is
     * still queued gets a short while to be written.
     */
    const install = (next: ExecutionLogSettings) =>
      Effect.gen(function* () {
        const installed = new LogWriteQueue(next.queueSize)
        const own = yield* storeOfItsOwn
        const installLabels = yield* FiberRef.get(FiberRef.currentMetricLabels)
        const retaining = yield* makeLogRetention(own, next.cap, counts)
        yield* Effect.acquireRelease(
          Effect.sync(() => {
            settings = next
            encoder = new LogBatchEncoder(shared.execKeySync, next.detailBytes)
            labels = installLabels
            store = own
            queue = installed
            retention = retaining
          }),
          () =>
            Effect.gen(function* () {
              if (queue === installed) queue = undefined
              if (retention === retaining) retention = undefined
              while (installed.size > 0) yield* flush(installed.take(BATCH_WRITES))
            }).pipe(Effect.timeout(DRAIN_TIMEOUT), Effect.ignore)
        )
        // Forked after the release above is registered, so the fibers stop before the drain runs.
        yield* Effect.forkScoped(retaining.loop)
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
      queueSize: settings.queueSize,
      ...counts
    })

    return { enabled, offer, append, install, stats } as const
  })
}) {}
