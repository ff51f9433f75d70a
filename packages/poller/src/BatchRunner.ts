import { Cause, Effect, Exit, Fiber, Option, type Semaphore } from "effect"
import type { BatchOutcome } from "./BatchOutcome.js"
import type { PollerEntry } from "./PollerOptions.js"
import type { Stats } from "./PollerStats.js"

/**
 * What running one batch decided, filled in while it runs (so an interrupted batch still settles
 * what finished): entries to acknowledge, and entries that failed with their error text. An entry
 * in neither (never started, or interrupted) is not settled and stays pending.
 */
export interface BatchResult {
  readonly succeeded: Array<PollerEntry>
  readonly failed: Array<{ readonly entry: PollerEntry; readonly error: string }>
}

/** `restore` of the `Effect.uninterruptibleMask` the batch runs in. */
export type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * Runs the handler over one batch of one scope, called inside the batch's uninterruptible mask:
 * what waits (a permit, the handler) runs under `restore`, so shutdown can interrupt it, and the
 * bookkeeping around it cannot be cut off. It fails only by being interrupted (handler failures
 * go into the result).
 */
export type BatchRunner<R> = (entries: ReadonlyArray<PollerEntry>, result: BatchResult, restore: Restore) => Effect.Effect<void, never, R>

/** What a runner shares with its poller. */
export interface RunnerEnv {
  /** Bounds handlers (or batches) over all scopes. */
  readonly permits: Semaphore.Semaphore
  readonly concurrency: number
  readonly stats: Stats
  /** True once shutdown began: start nothing more. */
  readonly isStopping: () => boolean
}

/** Longest error text kept in a dead letter. */
const MAX_ERROR_CHARS = 4096

const clip = (text: string) => (text.length > MAX_ERROR_CHARS ? text.slice(0, MAX_ERROR_CHARS) + "…" : text)

/** An error value as dead-letter text: `_tag: message` for (tagged) errors, JSON otherwise. */
export const describeError = (e: unknown): string => {
  if (e instanceof Error) return clip(`${(e as { readonly _tag?: unknown })._tag ?? e.name}: ${e.message}`)
  return clip(JSON.stringify(e) ?? String(e))
}

export const describeFailure = (cause: Cause.Cause<unknown>): string =>
  Option.match(Cause.findErrorOption(cause), { onNone: () => clip(Cause.pretty(cause)), onSome: describeError })

/**
 * The per-entry handler over a batch: up to `min(batch, concurrency)` lanes, each holding one
 * permit and taking the next entry in a plain loop, so a batch costs a few fibers, not one per entry.
 */
export const entryRunner =
  <E, R>(handler: (entry: PollerEntry) => Effect.Effect<void, E, R>, env: RunnerEnv): BatchRunner<R> =>
  (entries, result, restore) =>
    restore(
      Effect.suspend(() => {
        let next = 0
        let running = 0
        const work = Effect.gen(function* () {
          while (next < entries.length && !env.isStopping()) {
            const entry = entries[next++]!
            running++
            env.stats.move("inFlight", 1)
            // suspend: a handler that throws fails its entry instead of the lane.
            const exit = yield* Effect.exit(Effect.suspend(() => handler(entry)))
            running--
            env.stats.move("inFlight", -1)
            if (Exit.isSuccess(exit)) result.succeeded.push(entry)
            // Interrupted past the shutdown grace: not settled, it stays pending for a later delivery.
            else if (!Cause.hasInterruptsOnly(exit.cause)) result.failed.push({ entry, error: describeFailure(exit.cause) })
          }
        })
        const lanes = Math.min(entries.length, env.concurrency)
        const all = lanes <= 1 ? env.permits.withPermits(1)(work) : inLanes(work, lanes, env, () => next < entries.length - 1)
        // Lanes interrupted inside a handler never reach their decrement.
        return Effect.ensuring(all, Effect.sync(() => env.stats.move("inFlight", -running)))
      })
    )

/**
 * Up to `n` lanes of `work` at once, each under a permit: the current fiber runs the first, and
 * each lane forks the next one as it starts, while `more()` says entries are left beyond the one
 * it is about to take. Handlers that wait thus spread over all lanes within a few scheduler turns,
 * while a batch of handlers that never wait runs in the first lane and costs one fork, not n - 1.
 * Forks are plain ones, awaited (not `Effect.all`, whose joins merge every fiber's FiberRefs back;
 * that was half the per-entry CPU). However the current one ends (interrupted at shutdown), the
 * forks are interrupted and awaited first, so nothing writes into the batch's result once it is
 * being settled.
 */
const inLanes = <R>(work: Effect.Effect<void, never, R>, n: number, env: RunnerEnv, more: () => boolean): Effect.Effect<void, never, R> =>
  Effect.suspend(() => {
    const forks: Array<Fiber.Fiber<void>> = []
    const lane: Effect.Effect<void, never, R> = env.permits.withPermits(1)(
      Effect.suspend(() => (forks.length + 1 < n && more() ? Effect.andThen(Effect.forkDetach(lane).pipe(Effect.map((f) => forks.push(f))), work) : work))
    )
    return Effect.gen(function* () {
      yield* lane
      // A fork adds the lane it starts before it ends, so this sees every one.
      for (let i = 0; i < forks.length; i++) yield* Fiber.await(forks[i]!)
    }).pipe(Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Fiber.interruptAll(forks))))
  })

const malformed = "handleBatch returned neither nothing nor { failures: [{ id, error }, ...] }"

/** Splits a batch by how its handler ended; interrupted, it settles nothing. */
const recordExit = (entries: ReadonlyArray<PollerEntry>, exit: Exit.Exit<BatchOutcome | void, unknown>, result: BatchResult): void => {
  if (Exit.isSuccess(exit)) return recordOutcome(entries, exit.value, result)
  if (Cause.hasInterruptsOnly(exit.cause)) return
  const error = describeFailure(exit.cause)
  for (const entry of entries) result.failed.push({ entry, error })
}

/** Splits a batch by the outcome its handler returned. */
const recordOutcome = (entries: ReadonlyArray<PollerEntry>, outcome: BatchOutcome | void, result: BatchResult): void => {
  if (outcome === undefined || outcome === null) {
    for (const entry of entries) result.succeeded.push(entry)
    return
  }
  const failures = (outcome as { readonly failures?: unknown }).failures
  if (!Array.isArray(failures)) {
    for (const entry of entries) result.failed.push({ entry, error: malformed })
    return
  }
  const errors = new Map<string, unknown>()
  for (const f of failures as ReadonlyArray<{ readonly id?: unknown; readonly error?: unknown }>) {
    if (f !== null && typeof f === "object" && typeof f.id === "string" && !errors.has(f.id)) errors.set(f.id, f.error)
  }
  for (const entry of entries) {
    if (errors.has(entry.id)) result.failed.push({ entry, error: describeError(errors.get(entry.id)) })
    else result.succeeded.push(entry)
  }
}

/**
 * The batch handler: one call (and one permit) per batch. Only the wait for the permit and the
 * handler are interruptible; taking and giving back the permit and recording the outcome are
 * plain steps of the batch's mask (not `withPermits` and `ensuring`, each a mask of its own).
 */
export const batchRunner =
  <E, R>(handleBatch: (entries: ReadonlyArray<PollerEntry>) => Effect.Effect<BatchOutcome | void, E, R>, env: RunnerEnv): BatchRunner<R> =>
  (entries, result, restore) =>
    Effect.flatMap(restore(env.permits.take(1)), () => {
      if (env.isStopping()) return env.permits.release(1)
      env.stats.move("inFlight", entries.length)
      // suspend: a handler that throws fails its batch instead of the worker.
      return Effect.flatMap(Effect.exit(restore(Effect.suspend(() => handleBatch(entries)))), (exit) => {
        env.stats.move("inFlight", -entries.length)
        recordExit(entries, exit, result)
        return env.permits.release(1)
      })
    })
