import { Effect, Stream } from "effect"
import type { ConnectionError, InvalidInput, NotFound, WrongType } from "@microdcs/store"
import { backoffMs } from "./PollerOptions.js"
import { errorText, handleAll, handleClaimed, moveToDeadLetter, retryAfter, type ScopeRun, type WorkerContext, type WorkerDeadlines } from "./ScopeBatches.js"
import type { Waker } from "./Waker.js"

export type { WorkerContext } from "./ScopeBatches.js"

type ReadError = NotFound | WrongType | InvalidInput | ConnectionError

// The effects built by the `...Of` functions below are built once per worker and run every round.

/** Orphans of dead or hung consumers, page by page; an entry past its last delivery is dead-lettered instead. */
const claimOrphansOf = <R>(w: ScopeRun<R>) => {
  const { streams, options, stats } = w.ctx
  return streams.autoClaim(w.stream, options.group, options.consumer, { minIdleMs: options.claimIdleMs, count: options.batchSize }).pipe(
    Stream.runForEachWhile((page) =>
      Effect.gen(function* () {
        yield* stats.add("claimDeleted", page.deletedIds.length)
        yield* handleClaimed(w, page.entries)
        return !(yield* w.stopped)
      })
    )
  )
}

/**
 * Takes over every entry pending on `owner`, a consumer whose heartbeat is gone, page by page.
 * XCLAIM's min idle time makes two live consumers that both saw the death claim each entry once:
 * the first claim resets the idle time and the second finds the entry too fresh.
 */
const takeOverFrom = <R>(w: ScopeRun<R>, owner: string) =>
  Effect.gen(function* () {
    const { streams, options } = w.ctx
    const { group, consumer } = options
    let start = "-"
    while (!(yield* w.stopped)) {
      const rows = yield* streams.pendingEntries(w.stream, group, { consumer: owner, start, count: options.batchSize })
      if (rows.length === 0) return
      const before = new Map(rows.map((r) => [r.id, r.deliveries]))
      const entries = yield* streams.claim(w.stream, group, consumer, options.heartbeatIntervalMs, [...before.keys()])
      yield* handleClaimed(w, entries.map((e) => ({ ...e, deliveries: before.get(e.id)! + 1 })))
      if (rows.length < options.batchSize) return
      start = `(${rows[rows.length - 1]!.id}`
    }
  })

/** Consumers of this group with pending entries here whose heartbeat is gone lose them to this one. */
const takeOverDeadOf = <R>(w: ScopeRun<R>) =>
  Effect.gen(function* () {
    const { streams, options } = w.ctx
    const summary = yield* streams.pending(w.stream, options.group)
    const others = summary.consumers.map((c) => c.consumer).filter((c) => c !== options.consumer)
    if (others.length === 0) return
    for (const owner of yield* w.ctx.heartbeat.dead(others)) {
      yield* Effect.logInfo("poller: taking over the pending entries of a consumer without heartbeat").pipe(Effect.annotateLogs({ owner }))
      yield* takeOverFrom(w, owner)
    }
  })

/** Own pending entries by what is due: ids to deliver again (with their deliveries so far), the rest retried later or dead-lettered. */
const dueOwnEntries = <R>(w: ScopeRun<R>, rows: ReadonlyArray<{ readonly id: string; readonly deliveries: number; readonly idleMs: number }>) =>
  Effect.gen(function* () {
    const { options } = w.ctx
    const now = Date.now()
    const due = new Map<string, number>()
    for (const row of rows) {
      const wait = backoffMs(options, row.deliveries) - row.idleMs
      if (wait > 0) retryAfter(w.state, now + wait)
      else if (row.deliveries >= options.maxDeliveries) {
        yield* moveToDeadLetter(w, row.id, w.lastError.get(row.id) ?? `no acknowledgement after ${row.deliveries} deliveries`)
      } else due.set(row.id, row.deliveries)
    }
    return due
  })

/** This consumer's failed entries whose backoff has passed: delivered again (XCLAIM counts it) or dead-lettered. */
const retryOwnOf = <R>(w: ScopeRun<R>) =>
  Effect.gen(function* () {
    const { streams, options, stats } = w.ctx
    const { group, consumer } = options
    if (!w.state.ownPending) return
    w.state.ownPending = false
    const rows = yield* streams.pendingEntries(w.stream, group, { consumer, count: options.batchSize })
    if (rows.length === options.batchSize) w.state.ownPending = true
    const due = yield* dueOwnEntries(w, rows)
    if (due.size === 0 || (yield* w.stopped)) return
    // The min idle time keeps us from taking back an entry another consumer claimed a moment ago.
    const entries = yield* streams.claim(w.stream, group, consumer, options.backoffInitialMs, [...due.keys()])
    yield* stats.add("retried", entries.length)
    yield* handleAll(w, entries, (e) => due.get(e.id)! + 1)
  })

const firstDelivery = () => 1

/** New entries, read after read until one comes back short (the stream is drained for now). */
const readNewOf = <R>(w: ScopeRun<R>): Effect.Effect<void, ReadError, R> => {
  const { ctx } = w
  const { streams, options, stats } = ctx
  const readOptions = { streams: [w.stream], group: options.group, consumer: options.consumer, count: options.batchSize } as const
  const readNew: Effect.Effect<void, ReadError, R> = Effect.suspend(() =>
    ctx.isStopping()
      ? Effect.void
      : Effect.flatMap(streams.readGroup(readOptions), (batches) => {
          const entries = batches[0]?.entries ?? []
          stats.count("read", entries.length)
          const handled = handleAll(w, entries, firstDelivery)
          return entries.length < options.batchSize ? handled : Effect.andThen(handled, readNew)
        })
  )
  return readNew
}

/** One round: each kind of work that is due, then new entries; a failure is logged and the next wake retries. */
const roundOf = <R>(w: ScopeRun<R>) => {
  const { streams, options, stats } = w.ctx
  const { state } = w
  const takeOverDead = takeOverDeadOf(w)
  const claimOrphans = claimOrphansOf(w)
  const retryOwn = retryOwnOf(w)
  const readNew = readNewOf(w)
  const trim = streams.trim(w.stream).pipe(Effect.flatMap((r) => stats.add("trimmed", r.removed)))
  return Effect.gen(function* () {
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
      streams.ensureGroup(w.stream, options.group, options.groupStartId).pipe(Effect.map(() => retryAfter(state, Date.now())))
    ),
    Effect.catch((e) => Effect.logWarning("poller: round failed; the next wake retries").pipe(Effect.annotateLogs({ error: errorText(e) })))
  )
}

/** Sleeps until a wake (nudge, fallback tick, shutdown) or the next due retry, orphan claim or trim. */
const nextWakeOf = <R>({ ctx, state, waker }: ScopeRun<R>) =>
  Effect.suspend(() => {
    let due = Math.min(state.nextTakeoverAt, state.nextClaimAt)
    if (state.retryAt !== undefined) due = Math.min(due, state.retryAt)
    if (ctx.options.trimIntervalMs > 0) due = Math.min(due, state.nextTrimAt)
    state.retryAt = undefined
    // A few ms of slack so the server-side idle time has surely passed the backoff.
    return waker.sleep(due - Date.now() + 5)
  })

const scopeRunOf = <R>(ctx: WorkerContext<R>, scope: string, stream: string, deadLetter: string, waker: Waker): ScopeRun<R> => {
  // Deadlines in plain real time, the time the waker's timer runs on.
  const start = Date.now()
  const state: WorkerDeadlines = {
    nextClaimAt: start,
    nextTakeoverAt: start,
    // Not in the first round: what a new worker just handled stays readable for a while (admin, replays).
    nextTrimAt: start + ctx.options.trimIntervalMs,
    retryAt: undefined,
    ownPending: true
  }
  return { ctx, scope, stream, deadLetter, waker, lastError: new Map<string, string>(), state, stopped: Effect.sync(ctx.isStopping) }
}

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
    const w = scopeRunOf(ctx, scope, stream, deadLetter, waker)
    const round = roundOf(w)
    const nextWake = nextWakeOf(w)
    while (!ctx.isStopping()) {
      yield* nextWake
      if (ctx.isStopping()) return
      yield* round
    }
  }).pipe(Effect.annotateLogs({ kind: ctx.options.kind, scope, group: ctx.options.group, consumer: ctx.options.consumer }))
