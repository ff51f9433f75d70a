import { Context, Effect, Layer, Metric, Scheduler } from "effect"
import { ExecutionLogStore, makeValkey, Valkey, type ValkeyService } from "@microdcs/store"
import type { LogWrite } from "@microdcs/sfc"
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
 * Once woken, a queue holding fewer writes than `LINGER_UNTIL` is left to grow this long first:
 * under a light load each step's CAS would otherwise be a batch (a socket write and a MULTI) of
 * its own, about three per job. The log is never waited for, so 10 ms later costs nothing.
 */
const LINGER_MS = 10
const LINGER_UNTIL = 256

/** The linger, on a plain timer: the log's pace is the wall clock's, also under a test clock. */
const linger = (queue: LogWriteQueue): Effect.Effect<void> =>
  queue.size >= LINGER_UNTIL
    ? Effect.void
    : Effect.callback<void>((resume) => {
        const timer = setTimeout(() => resume(Effect.void), LINGER_MS)
        return Effect.sync(() => clearTimeout(timer))
      })

/**
 * The writer's fiber runs in Node's check phase (setImmediate), after the I/O callbacks and
 * microtasks of the same turn: the engine fibers woken by replies (a CAS, a station event) go
 * first, and the log writes of every CAS of the turn make one batch.
 */
const afterIo = new Scheduler.MixedScheduler("async", (run) => {
  const immediate = setImmediate(run)
  return () => clearImmediate(immediate)
})

const writesIn = (batch: ReadonlyArray<QueuedWrites>): number => batch.reduce((n, queued) => n + queued.writes.length, 0)

/** What the writer has done so far, counted in plain code. */
type WriterCounts = { -readonly [K in Exclude<keyof ExecutionLogStats, "installed" | "queued" | "queueSize">]: number }

/** The writer of one process: set by `install`, read by the CAS path and the writing fiber in plain code. */
interface LogWriterState {
  readonly shared: ExecutionLogStore["Service"]
  readonly valkey: ValkeyService
  // The store the fiber writes through: a connection of its own once installed, so a log
  // batch never queues in front of the engine's state writes on the shared connection.
  store: ExecutionLogStore["Service"]
  queue: LogWriteQueue | undefined
  settings: ExecutionLogSettings
  encoder: LogBatchEncoder
  // The context of the fiber that installs the writer: its metric attributes and registry, as Metric.update would use them.
  metrics: Context.Context<never>
  readonly counts: WriterCounts
  retention: LogRetention | undefined
}

/** Counts drops from plain code: the CAS path runs no effect for the log. */
const drop = (w: LogWriterState, n: number): void => {
  if (n <= 0) return
  w.counts.dropped += n
  executionLogDroppedCounter.updateUnsafe(n, w.metrics)
}

/** Queues the writes of one CAS, from plain code; what does not fit is dropped and counted. Never waits. */
const offer = (w: LogWriterState, scope: string, writes: ReadonlyArray<LogWrite>): void => {
  if (w.queue === undefined || writes.length === 0) return
  drop(w, w.queue.offer(scope, writes))
}

/** Times a written batch (wall time, the event loop's waits included: what the 5 s budget counts). */
const timed = ({ counts }: LogWriterState, startedAt: number): void => {
  const ms = performance.now() - startedAt
  counts.batches += 1
  counts.lastBatchMs = ms
  counts.slowestBatchMs = Math.max(counts.slowestBatchMs, ms)
}

/**
 * Writes one batch (the CASes queued since the last one, up to `BATCH_WRITES`): its values,
 * then its commit requests. Retention is only asked for: it runs in a fiber of its own.
 */
const flush = (w: LogWriterState, batch: ReadonlyArray<QueuedWrites>) =>
  Effect.gen(function* () {
    const { counts } = w
    const startedAt = performance.now()
    const { values, opened, executions, commits, unwritable } = w.encoder.encode(batch)
    drop(w, unwritable)
    yield* w.store.write(values, executions)
    counts.written += values.length
    if (commits.length > 0) yield* w.store.commitAll(commits)
    counts.commits += commits.length
    w.retention?.opened(counts.opened, opened.length)
    counts.opened += opened.length
    timed(w, startedAt)
  }).pipe(
    Effect.timeout(BATCH_TIMEOUT),
    Effect.catchCause((cause) => {
      const writes = writesIn(batch)
      drop(w, writes)
      return Effect.logWarning("execution log batch dropped", cause).pipe(Effect.annotateLogs({ writes }))
    })
  )

/** The log's store on a Valkey connection of its own, for the life of the current scope. */
const storeOfItsOwn = ({ valkey, shared }: LogWriterState) =>
  Effect.suspend(() => {
    const options = { ...valkey.options, connectionName: `${valkey.options.connectionName ?? "microdcs"}-execution-log` }
    // Built from its constructor, not its layer: a layer built here would be the engine's own
    // (effect 4 shares the layers built so far), on the shared connection.
    return makeValkey(options).pipe(
      Effect.flatMap((own) => Effect.provideService(ExecutionLogStore.make, Valkey, own)),
      // Best effort like the rest of the log: without a connection of its own it shares the engine's.
      Effect.catchCause((cause) => Effect.as(Effect.logWarning("execution log: no connection of its own, sharing the engine's", cause), shared))
    )
  })

/** The writer as `install` sets it up: what it writes through, its queue and its retention. */
interface Installed {
  readonly settings: ExecutionLogSettings
  readonly store: ExecutionLogStore["Service"]
  readonly queue: LogWriteQueue
  readonly metrics: Context.Context<never>
  readonly retention: LogRetention
}

/** Sets the writer up for the life of the scope; at its end appends stop and the queue gets `DRAIN_TIMEOUT` to be written. */
const installFor = (w: LogWriterState, next: Installed) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      w.settings = next.settings
      w.encoder = new LogBatchEncoder(w.shared.execKeySync, next.settings.detailBytes)
      w.metrics = next.metrics
      w.store = next.store
      w.queue = next.queue
      w.retention = next.retention
    }),
    () =>
      Effect.gen(function* () {
        if (w.queue === next.queue) w.queue = undefined
        if (w.retention === next.retention) w.retention = undefined
        while (next.queue.size > 0) yield* flush(w, next.queue.take(BATCH_WRITES))
      }).pipe(Effect.timeout(DRAIN_TIMEOUT), Effect.ignore)
  )

/**
 * Starts writing for the life of the current scope. At its end, appends stop and what is
 * still queued gets a short while to be written.
 */
const install = (w: LogWriterState, settings: ExecutionLogSettings) =>
  Effect.gen(function* () {
    const queue = new LogWriteQueue(settings.queueSize)
    const store = yield* storeOfItsOwn(w)
    const metrics = yield* Effect.context<never>()
    const retention = yield* makeLogRetention(store, settings.cap, w.counts)
    yield* installFor(w, { settings, store, queue, metrics, retention })
    // Forked after the release above is registered, so the fibers stop before the drain runs.
    yield* Effect.forkScoped(retention.loop)
    // Each round takes what is queued (up to a batch) after the linger: while a batch is on
    // the wire, the next one grows.
    yield* Effect.forkScoped(
      queue.waitForWrites.pipe(
        Effect.andThen(Effect.suspend(() => linger(queue))),
        Effect.flatMap(() => flush(w, queue.take(BATCH_WRITES))),
        Effect.forever,
        Effect.provideService(Scheduler.Scheduler, afterIo)
      )
    )
  })

const stats = ({ queue, settings, counts }: LogWriterState): ExecutionLogStats => ({
  installed: queue !== undefined,
  queued: queue === undefined ? 0 : queue.size,
  queueSize: settings.queueSize,
  ...counts
})

/**
 * The engine's execution log writer: after a successful CAS the runtime
 * appends the core's log writes here, without waiting; one background fiber writes them in
 * pipelined batches through `ExecutionLogStore`, hands each closed execution's keys to
 * `dag:commits:{scope}` and applies retention. Under pressure writes are dropped and counted,
 * never waited for: the log is best effort. Until `install` (the engine processes, when the log
 * is on) appends are ignored, and the core is given no execution ids.
 */
export class ExecutionLogWriter extends Context.Service<ExecutionLogWriter>()("@microdcs/sfc/ExecutionLogWriter", {
  make: Effect.gen(function* () {
    const shared = yield* ExecutionLogStore
    const w: LogWriterState = {
      shared,
      valkey: yield* Valkey,
      store: shared,
      queue: undefined,
      settings: { queueSize: 0, cap: 0, detailBytes: 0 },
      encoder: new LogBatchEncoder(shared.execKeySync, 0),
      metrics: Context.empty(),
      counts: { written: 0, dropped: 0, commits: 0, opened: 0, removed: 0, batches: 0, lastBatchMs: 0, slowestBatchMs: 0, retentionFailures: 0 },
      retention: undefined
    }
    return {
      /** Whether the log is being written: only then does the runtime give executions ids. */
      enabled: (): boolean => w.queue !== undefined,
      offer: (scope: string, writes: ReadonlyArray<LogWrite>) => offer(w, scope, writes),
      /** `offer` as an effect. */
      append: (scope: string, writes: ReadonlyArray<LogWrite>): Effect.Effect<void> => Effect.sync(() => offer(w, scope, writes)),
      install: (settings: ExecutionLogSettings) => install(w, settings),
      stats: () => stats(w)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies.pipe(Layer.provide([ExecutionLogStore.Default]))
}
