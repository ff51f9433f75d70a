import { Effect, Stream } from "effect"
import type { ClaimedEntry, ConnectionError, ConsumerHeartbeat, InvalidInput, NotFound, StreamEntry, ValkeyStreams, WrongType } from "@microdcs/store"
import { backoffMs, type PollerEntry, type ResolvedOptions } from "./PollerOptions.js"
import type { Stats } from "./PollerStats.js"
import type { BatchResult, BatchRunner } from "./BatchRunner.js"
import type { Waker } from "./Waker.js"

/** Everything a scope worker shares with its poller. */
export interface WorkerContext<R> {
  readonly options: ResolvedOptions
  readonly streams: ValkeyStreams
  /** Tells dead consumers of the group from live ones. */
  readonly heartbeat: ConsumerHeartbeat
  /** The handler (per entry or per batch) over one batch. */
  readonly run: BatchRunner<R>
  readonly stats: Stats
  /** True once shutdown began (every worker is woken then): read no more, start no more handlers. */
  readonly isStopping: () => boolean
}

type ReadError = NotFound | WrongType | InvalidInput | ConnectionError

const errorText = (e: { readonly _tag: string; readonly message?: string }) => `${e._tag}: ${e.message ?? ""}`

/**
 * The consumer of one scope's stream. One worker per scope runs one round at a time, so a scope
 * is never read twice at once; its handlers run concurrently within the poller's permits. A
 * round: take over the entries of consumers whose heartbeat is gone (every heartbeatIntervalMs)
 * and orphans idle past claimIdleMs (every claimIntervalMs), deliver own failed entries whose
 * backoff has passed (or dead-letter them), read new entries until the stream is drained, trim
 * (every trimIntervalMs).
 * Between rounds the worker sleeps until a wake (nudge, fallback tick, shutdown) or its next deadline.
 */
export const runWorker = <R>(
  ctx: WorkerContext<R>,
  scope: string,
  stream: string,
  deadLetter: string,
  waker: Waker
): Effect.Effect<void, never, R> =>
  Effect.gen(function* () {
    const { options, streams, stats } = ctx
    const { group, consumer } = options
    // Deadlines in plain real time, the time the waker's timer runs on.
    const start = Date.now()
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

    /** One XACK for every entry that succeeded. */
    const acknowledge = (succeeded: ReadonlyArray<PollerEntry>) => {
      const ids = new Array<string>(succeeded.length)
      for (let i = 0; i < succeeded.length; i++) ids[i] = succeeded[i]!.id
      if (lastError.size > 0) for (const id of ids) lastError.delete(id)
      return Effect.matchEffect(streams.ack(stream, group, ids), {
        onSuccess: () => Effect.sync(() => stats.count("processed", ids.length)),
        onFailure: (e) => {
          state.ownPending = true
          return Effect.logWarning("poller: ack failed; the entries will be delivered again").pipe(
            Effect.annotateLogs({ ids: ids.slice(0, 20).join(","), count: ids.length, error: errorText(e) })
          )
        }
      })
    }

    /** One XACK for what succeeded; each failure is retried after its backoff or dead-lettered. Reads the result when it runs. */
    const settle = ({ succeeded, failed }: BatchResult): Effect.Effect<void> =>
      Effect.suspend(() => {
        const acked = succeeded.length > 0 ? acknowledge(succeeded) : Effect.void
        return failed.length === 0 ? acked : Effect.zipRight(acked, settleFailures(failed))
      })

    const settleFailures = (failed: BatchResult["failed"]) =>
      Effect.gen(function* () {
        stats.count("failed", failed.length)
        const now = Date.now()
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
     * One batch: decoded in a plain loop, run (interruptible where the runner restores it), then
     * settled (not interruptible: whatever finished before an interruption is still acknowledged
     * or dead-lettered). One mask for the whole batch; the runner's permit and bookkeeping run inside it.
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
        return Effect.uninterruptibleMask((restore) => Effect.zipRight(Effect.exit(ctx.run(batch, result, restore)), settle(result)))
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
      const now = Date.now()
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

    const readOptions = { streams: [stream], group, consumer, count: options.batchSize } as const
    const firstDelivery = () => 1

    /** New entries, read after read until one comes back short (the stream is drained for now). */
    const readNew: Effect.Effect<void, ReadError, R> = Effect.suspend(() =>
      ctx.isStopping()
        ? Effect.void
        : Effect.flatMap(streams.readGroup(readOptions), (batches) => {
            const entries = batches[0]?.entries ?? []
            stats.count("read", entries.length)
            const handled = handleAll(entries, firstDelivery)
            return entries.length < options.batchSize ? handled : Effect.zipRight(handled, readNew)
          })
    )

    const trim = streams.trim(stream).pipe(Effect.flatMap((r) => stats.add("trimmed", r.removed)))

    const round = Effect.gen(function* () {
      const now = Date.now()
      if (now >= state.nextTakeoverAt) {
        state.nextTakeoverAt = now + options.heartbeatIntervalMs
        yield* takeOverDead
      }
      if (now >= state.nextClaimAt) {
        state.nextClaimAt = now + options.claimIntervalMs
        yield* claimOrphans
      }
      if (state.ownPending) yield* retryOwn
      yield* readNew
      if (options.trimIntervalMs > 0 && now >= state.nextTrimAt) {
        state.nextTrimAt = now + options.trimIntervalMs
        yield* trim
      }
    }).pipe(
      // The stream was deleted with its groups: create the group again and read at once.
      Effect.catchTag("NotFound", () =>
        streams.ensureGroup(stream, group, options.groupStartId).pipe(Effect.map(() => retryAfter(Date.now())))
      ),
      Effect.catchAll((e) => Effect.logWarning("poller: round failed; the next wake retries").pipe(Effect.annotateLogs({ error: errorText(e) })))
    )

    /** Sleeps until a wake (nudge, fallback tick, shutdown) or the next due retry, orphan claim or trim. */
    const nextWake = Effect.suspend(() => {
      let due = Math.min(state.nextTakeoverAt, state.nextClaimAt)
      if (state.retryAt !== undefined) due = Math.min(due, state.retryAt)
      if (options.trimIntervalMs > 0) due = Math.min(due, state.nextTrimAt)
      state.retryAt = undefined
      // A few ms of slack so the server-side idle time has surely passed the backoff.
      return waker.sleep(due - Date.now() + 5)
    })

    while (!ctx.isStopping()) {
      yield* nextWake
      if (ctx.isStopping()) return
      yield* round
    }
  }).pipe(Effect.annotateLogs({ kind: ctx.options.kind, scope, group: ctx.options.group, consumer: ctx.options.consumer }))
