import { Clock, Deferred, Effect, Queue, Stream } from "effect"
import type { ClaimedEntry, ConsumerHeartbeat, StreamEntry, ValkeyStreams } from "@microdcs/store"
import { backoffMs, type PollerEntry, type ResolvedOptions } from "./PollerOptions.js"
import type { Stats } from "./PollerStats.js"
import type { BatchResult, BatchRunner } from "./BatchRunner.js"

/** Everything a scope worker shares with its poller. */
export interface WorkerContext<R> {
  readonly options: ResolvedOptions
  readonly streams: ValkeyStreams
  /** Tells dead consumers of the group from live ones. */
  readonly heartbeat: ConsumerHeartbeat
  /** The handler (per entry or per batch) over one batch. */
  readonly run: BatchRunner<R>
  readonly stats: Stats
  /** Completed on shutdown: read no more, start no more handlers. */
  readonly stopping: Deferred.Deferred<void>
  /** The same as `stopping`, for plain code. */
  readonly isStopping: () => boolean
}

const errorText = (e: { readonly _tag: string; readonly message?: string }) => `${e._tag}: ${e.message ?? ""}`

/**
 * The consumer of one scope's stream. One worker per scope runs one round at a time, so a scope
 * is never read twice at once; its handlers run concurrently within the poller's permits. A
 * round: take over the entries of consumers whose heartbeat is gone (every heartbeatIntervalMs)
 * and orphans idle past claimIdleMs (every claimIntervalMs), deliver own failed entries whose
 * backoff has passed (or dead-letter them), read new entries until the stream is drained, trim
 * (every trimIntervalMs).
 * Between rounds the worker sleeps until a wake (nudge, fallback tick) or its next deadline.
 */
export const runWorker = <R>(
  ctx: WorkerContext<R>,
  scope: string,
  stream: string,
  deadLetter: string,
  signal: Queue.Queue<void>
): Effect.Effect<void, never, R> =>
  Effect.gen(function* () {
    const { options, streams, stats } = ctx
    const { group, consumer } = options
    const start = yield* Clock.currentTimeMillis
    /** Last error per pending id, for the dead letter; what a restart forgot is described generically. */
    const lastError = new Map<string, string>()
    const state = {
      nextClaimAt: start,
      nextTakeoverAt: start,
      // Not in the first round: what a new worker just handled stays readable for a while (admin, replays).
      nextTrimAt: start + options.trimIntervalMs,
      retryAt: undefined as number | undefined,
      /** Whether this consumer may own pending entries (a failure, a lost ack, or a previous run). */
      ownPending: true
    }
    const stopped = Effect.sync(ctx.isStopping)

    const retryAfter = (at: number) => {
      state.ownPending = true
      state.retryAt = state.retryAt === undefined ? at : Math.min(state.retryAt, at)
    }

    const moveToDeadLetter = (id: string, error: string) =>
      streams.deadLetter({ stream, deadLetter, group, consumer, id, error }).pipe(
        Effect.flatMap((outcome) => {
          if (outcome.status !== "moved") return Effect.logDebug(`poller: dead letter skipped, entry ${outcome.status}`)
          lastError.delete(id)
          stats.count("deadLettered")
          return Effect.logWarning("poller: entry moved to the dead-letter stream").pipe(Effect.annotateLogs({ id, error }))
        }),
        Effect.catchAll((e) =>
          Effect.sync(() => (state.ownPending = true)).pipe(
            Effect.zipRight(Effect.logWarning("poller: dead letter failed; the entry stays pending").pipe(Effect.annotateLogs({ id, error: errorText(e) })))
          )
        )
      )

    /** One XACK for what succeeded; each failure is retried after its backoff or dead-lettered. */
    const settle = ({ succeeded, failed }: BatchResult) =>
      Effect.gen(function* () {
        if (succeeded.length > 0) {
          const ids = succeeded.map((e) => e.id)
          const acked = yield* Effect.either(streams.ack(stream, group, ids))
          if (lastError.size > 0) for (const id of ids) lastError.delete(id)
          if (acked._tag === "Right") stats.count("processed", ids.length)
          else {
            state.ownPending = true
            yield* Effect.logWarning("poller: ack failed; the entries will be delivered again").pipe(
              Effect.annotateLogs({ ids: ids.slice(0, 20).join(","), count: ids.length, error: errorText(acked.left) })
            )
          }
        }
        if (failed.length === 0) return
        stats.count("failed", failed.length)
        const now = yield* Clock.currentTimeMillis
        for (const { entry, error } of failed) {
          lastError.set(entry.id, error)
          if (entry.deliveries >= options.maxDeliveries) {
            yield* moveToDeadLetter(entry.id, error)
            continue
          }
          retryAfter(now + backoffMs(options, entry.deliveries))
          yield* Effect.logDebug("poller: handler failed; retry after backoff").pipe(Effect.annotateLogs({ id: entry.id, error }))
        }
      })

    /**
     * One batch: decoded in a plain loop, run (interruptible), then settled (not interruptible:
     * whatever finished before an interruption is still acknowledged or dead-lettered).
     */
    const handleAll = <A extends StreamEntry>(entries: ReadonlyArray<A>, deliveries: (e: A) => number) =>
      Effect.suspend(() => {
        if (entries.length === 0 || ctx.isStopping()) return Effect.void // read but never started: it stays pending
        const batch = new Array<PollerEntry>(entries.length)
        for (let i = 0; i < entries.length; i++) {
          const e = entries[i]!
          batch[i] = { kind: options.kind, scope, stream, id: e.id, fields: e.fields, deliveries: deliveries(e) }
        }
        const result: BatchResult = { succeeded: [], failed: [] }
        return Effect.uninterruptibleMask((restore) => Effect.exit(restore(ctx.run(batch, result))).pipe(Effect.zipRight(settle(result))))
      })

    /** Orphans of dead or hung consumers, page by page; an entry past its last delivery is dead-lettered instead. */
    const claimOrphans = streams.autoClaim(stream, group, consumer, { minIdleMs: options.claimIdleMs, count: options.batchSize }).pipe(
      Stream.runForEachWhile((page) =>
        Effect.gen(function* () {
          yield* stats.add("claimDeleted", page.deletedIds.length)
          yield* handleClaimed(page.entries)
          return !(yield* stopped)
        })
      )
    )

    /** Claimed entries: run again, or dead-lettered when the claim was past their last delivery. */
    const handleClaimed = (entries: ReadonlyArray<ClaimedEntry>) =>
      Effect.gen(function* () {
        yield* stats.add("claimed", entries.length)
        const live: Array<ClaimedEntry> = []
        for (const e of entries) {
          if (e.deliveries <= options.maxDeliveries) live.push(e)
          else yield* moveToDeadLetter(e.id, lastError.get(e.id) ?? `no acknowledgement after ${e.deliveries - 1} deliveries (consumer lost or hung)`)
        }
        yield* handleAll(live, (e) => e.deliveries)
      })

    /**
     * Takes over every entry pending on `owner`, a consumer whose heartbeat is gone, page by page.
     * XCLAIM's min idle time makes two live consumers that both saw the death claim each entry once:
     * the first claim resets the idle time and the second finds the entry too fresh.
     */
    const takeOverFrom = (owner: string) =>
      Effect.gen(function* () {
        let start = "-"
        while (!(yield* stopped)) {
          const rows = yield* streams.pendingEntries(stream, group, { consumer: owner, start, count: options.batchSize })
          if (rows.length === 0) return
          const before = new Map(rows.map((r) => [r.id, r.deliveries]))
          const entries = yield* streams.claim(stream, group, consumer, options.heartbeatIntervalMs, [...before.keys()])
          yield* handleClaimed(entries.map((e) => ({ ...e, deliveries: before.get(e.id)! + 1 })))
          if (rows.length < options.batchSize) return
          start = `(${rows[rows.length - 1]!.id}`
        }
      })

    /** Consumers of this group with pending entries here whose heartbeat is gone lose them to this one. */
    const takeOverDead = Effect.gen(function* () {
      const summary = yield* streams.pending(stream, group)
      const others = summary.consumers.map((c) => c.consumer).filter((c) => c !== consumer)
      if (others.length === 0) return
      for (const owner of yield* ctx.heartbeat.dead(others)) {
        yield* Effect.logInfo("poller: taking over the pending entries of a consumer without heartbeat").pipe(Effect.annotateLogs({ owner }))
        yield* takeOverFrom(owner)
      }
    })

    /** This consumer's failed entries whose backoff has passed: delivered again (XCLAIM counts it) or dead-lettered. */
    const retryOwn = Effect.gen(function* () {
      if (!state.ownPending) return
      state.ownPending = false
      const rows = yield* streams.pendingEntries(stream, group, { consumer, count: options.batchSize })
      if (rows.length === options.batchSize) state.ownPending = true
      const now = yield* Clock.currentTimeMillis
      const due = new Map<string, number>()
      for (const row of rows) {
        const wait = backoffMs(options, row.deliveries) - row.idleMs
        if (wait > 0) retryAfter(now + wait)
        else if (row.deliveries >= options.maxDeliveries) {
          yield* moveToDeadLetter(row.id, lastError.get(row.id) ?? `no acknowledgement after ${row.deliveries} deliveries`)
        } else due.set(row.id, row.deliveries)
      }
      if (due.size === 0 || (yield* stopped)) return
      // The min idle time keeps us from taking back an entry another consumer claimed a moment ago.
      const entries = yield* streams.claim(stream, group, consumer, options.backoffInitialMs, [...due.keys()])
      yield* stats.add("retried", entries.length)
      yield* handleAll(entries, (e) => due.get(e.id)! + 1)
    })

    const readNew = Effect.gen(function* () {
      while (!(yield* stopped)) {
        const batches = yield* streams.readGroup({ streams: [stream], group, consumer, count: options.batchSize })
        const entries = batches[0]?.entries ?? []
        yield* handleAll(entries, () => 1)
        if (entries.length < options.batchSize) return
      }
    })

    const trim = streams.trim(stream).pipe(Effect.flatMap((r) => stats.add("trimmed", r.removed)))

    const round = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (now >= state.nextTakeoverAt) {
        state.nextTakeoverAt = now + options.heartbeatIntervalMs
        yield* takeOverDead
      }
      if (now >= state.nextClaimAt) {
        state.nextClaimAt = now + options.claimIntervalMs
        yield* claimOrphans
      }
      yield* retryOwn
      yield* readNew
      if (options.trimIntervalMs > 0 && now >= state.nextTrimAt) {
        state.nextTrimAt = now + options.trimIntervalMs
        yield* trim
      }
    }).pipe(
      // The stream was deleted with its groups: create the group again and read at once.
      Effect.catchTag("NotFound", () =>
        streams.ensureGroup(stream, group, options.groupStartId).pipe(Effect.zipRight(Clock.currentTimeMillis), Effect.map(retryAfter))
      ),
      Effect.catchAll((e) => Effect.logWarning("poller: round failed; the next wake retries").pipe(Effect.annotateLogs({ error: errorText(e) })))
    )

    /** Sleeps until a wake (nudge, fallback tick) or the next due retry, orphan claim or trim. */
    const nextWake = Effect.gen(function* () {
      const deadlines = [state.retryAt, state.nextTakeoverAt, state.nextClaimAt, options.trimIntervalMs > 0 ? state.nextTrimAt : undefined]
      const due = Math.min(...deadlines.filter((d): d is number => d !== undefined))
      state.retryAt = undefined
      const now = yield* Clock.currentTimeMillis
      // A few ms of slack so the server-side idle time has surely passed the backoff.
      yield* Effect.race(Queue.take(signal), Effect.sleep(Math.max(0, due - now) + 5))
    })

    while (!(yield* stopped)) {
      yield* Effect.raceFirst(nextWake, Deferred.await(ctx.stopping))
      if (yield* stopped) return
      yield* round
    }
  }).pipe(Effect.annotateLogs({ kind: ctx.options.kind, scope, group: ctx.options.group, consumer: ctx.options.consumer }))
