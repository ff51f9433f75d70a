import { Effect } from "effect"
import type { ClaimedEntry, ConsumerHeartbeat, StreamEntry, ValkeyStreams } from "@microdcs/store"
import type { BatchResult, BatchRunner } from "./BatchRunner.js"
import { backoffMs, type PollerEntry, type ResolvedOptions } from "./PollerOptions.js"
import type { Stats } from "./PollerStats.js"
import type { Waker } from "./Waker.js"

/** One batch of a scope's entries: run, then settled (acknowledged, retried after a backoff, or dead-lettered). */

/** Everything a scope worker shares with its poller. */
export interface WorkerContext<R> {
  readonly options: ResolvedOptions
  readonly streams: ValkeyStreams["Service"]
  /** Tells dead consumers of the group from live ones. */
  readonly heartbeat: ConsumerHeartbeat
  /** The handler (per entry or per batch) over one batch. */
  readonly run: BatchRunner<R>
  readonly stats: Stats
  /** True once shutdown began (every worker is woken then): read no more, start no more handlers. */
  readonly isStopping: () => boolean
}

/** When the worker's next rounds of each kind are due (plain real time, the time the waker's timer runs on). */
export interface WorkerDeadlines {
  nextClaimAt: number
  nextTakeoverAt: number
  nextTrimAt: number
  retryAt: number | undefined
  /** Whether this consumer may own pending entries (a failure, a lost ack, or a previous run). */
  ownPending: boolean
}

/** One scope's worker: its poller's context, its stream and what it remembers between rounds. */
export interface ScopeRun<R> {
  readonly ctx: WorkerContext<R>
  readonly scope: string
  readonly stream: string
  readonly deadLetter: string
  readonly waker: Waker
  /** Last error per pending id, for the dead letter; what a restart forgot is described generically. */
  readonly lastError: Map<string, string>
  readonly state: WorkerDeadlines
  /** Whether shutdown began, as an effect (read between pages and claims). */
  readonly stopped: Effect.Effect<boolean>
}

export const errorText = (e: { readonly _tag: string; readonly message?: string }) => `${e._tag}: ${e.message ?? ""}`

export const retryAfter = (state: WorkerDeadlines, at: number) => {
  state.ownPending = true
  state.retryAt = state.retryAt === undefined ? at : Math.min(state.retryAt, at)
}

export const moveToDeadLetter = <R>(w: ScopeRun<R>, id: string, error: string) => {
  const { streams, options, stats } = w.ctx
  const { group, consumer } = options
  return streams.deadLetter({ stream: w.stream, deadLetter: w.deadLetter, group, consumer, id, error }).pipe(
    Effect.flatMap((outcome) => {
      if (outcome.status !== "moved") return Effect.logDebug(`poller: dead letter skipped, entry ${outcome.status}`)
      w.lastError.delete(id)
      stats.count("deadLettered")
      return Effect.logWarning("poller: entry moved to the dead-letter stream").pipe(Effect.annotateLogs({ id, error }))
    }),
    Effect.catch((e) =>
      Effect.sync(() => (w.state.ownPending = true)).pipe(
        Effect.andThen(Effect.logWarning("poller: dead letter failed; the entry stays pending").pipe(Effect.annotateLogs({ id, error: errorText(e) })))
      )
    )
  )
}

/** One XACK for every entry that succeeded. */
const acknowledge = <R>(w: ScopeRun<R>, succeeded: ReadonlyArray<PollerEntry>) => {
  const { lastError } = w
  const ids = new Array<string>(succeeded.length)
  for (let i = 0; i < succeeded.length; i++) ids[i] = succeeded[i]!.id
  if (lastError.size > 0) for (const id of ids) lastError.delete(id)
  return Effect.matchEffect(w.ctx.streams.ack(w.stream, w.ctx.options.group, ids), {
    onSuccess: () => Effect.sync(() => w.ctx.stats.count("processed", ids.length)),
    onFailure: (e) => {
      w.state.ownPending = true
      return Effect.logWarning("poller: ack failed; the entries will be delivered again").pipe(
        Effect.annotateLogs({ ids: ids.slice(0, 20).join(","), count: ids.length, error: errorText(e) })
      )
    }
  })
}

const settleFailures = <R>(w: ScopeRun<R>, failed: BatchResult["failed"]) =>
  Effect.gen(function* () {
    const { options, stats } = w.ctx
    stats.count("failed", failed.length)
    const now = Date.now()
    for (const { entry, error } of failed) {
      w.lastError.set(entry.id, error)
      if (entry.deliveries >= options.maxDeliveries) {
        yield* moveToDeadLetter(w, entry.id, error)
        continue
      }
      retryAfter(w.state, now + backoffMs(options, entry.deliveries))
      yield* Effect.logDebug("poller: handler failed; retry after backoff").pipe(Effect.annotateLogs({ id: entry.id, error }))
    }
  })

/** One XACK for what succeeded; each failure is retried after its backoff or dead-lettered. Reads the result when it runs. */
const settle = <R>(w: ScopeRun<R>, { succeeded, failed }: BatchResult): Effect.Effect<void> =>
  Effect.suspend(() => {
    const acked = succeeded.length > 0 ? acknowledge(w, succeeded) : Effect.void
    return failed.length === 0 ? acked : Effect.andThen(acked, settleFailures(w, failed))
  })

/**
 * One batch: decoded in a plain loop, run (interruptible where the runner restores it), then
 * settled (not interruptible: whatever finished before an interruption is still acknowledged
 * or dead-lettered). One mask for the whole batch; the runner's permit and bookkeeping run inside it.
 */
export const handleAll = <R, A extends StreamEntry>(w: ScopeRun<R>, entries: ReadonlyArray<A>, deliveries: (e: A) => number) =>
  Effect.suspend(() => {
    const { ctx, scope, stream } = w
    if (entries.length === 0 || ctx.isStopping()) return Effect.void // read but never started: it stays pending
    const batch = new Array<PollerEntry>(entries.length)
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!
      batch[i] = { kind: ctx.options.kind, scope, stream, id: e.id, fields: e.fields, deliveries: deliveries(e) }
    }
    const result: BatchResult = { succeeded: [], failed: [] }
    return Effect.uninterruptibleMask((restore) => Effect.andThen(Effect.exit(ctx.run(batch, result, restore)), settle(w, result)))
  })

const claimedDeliveries = (e: ClaimedEntry) => e.deliveries

/** Claimed entries: run again, or dead-lettered when the claim was past their last delivery. */
export const handleClaimed = <R>(w: ScopeRun<R>, entries: ReadonlyArray<ClaimedEntry>) =>
  Effect.gen(function* () {
    const { options, stats } = w.ctx
    yield* stats.add("claimed", entries.length)
    const live: Array<ClaimedEntry> = []
    for (const e of entries) {
      if (e.deliveries <= options.maxDeliveries) live.push(e)
      else yield* moveToDeadLetter(w, e.id, w.lastError.get(e.id) ?? `no acknowledgement after ${e.deliveries - 1} deliveries (consumer lost or hung)`)
    }
    yield* handleAll(w, live, claimedDeliveries)
  })
