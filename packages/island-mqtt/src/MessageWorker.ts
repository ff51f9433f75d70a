import { Duration, Effect, Fiber, FiberSet, Ref, Schedule, type Scope, Semaphore, Stream } from "effect"
import type { IncomingMessage } from "@microdcs/cloudevents-mqtt"

/** How one subscription's messages are worked off. */
export interface WorkerOptions {
  /** Messages handled at once (default 16). Keep the connection's `receiveMaximum` at least this high. */
  readonly concurrency?: number | undefined
  /** On shutdown, how long in-flight messages may take to finish (default 10 s); the rest stay unacknowledged. */
  readonly shutdownGraceMs?: number | undefined
  /** First wait before a failed message is tried again (default 100 ms); doubles up to `retryMaxMs`. */
  readonly retryMinMs?: number | undefined
  /** Cap of that wait (default 5 s). */
  readonly retryMaxMs?: number | undefined
  /**
   * Told about every handled message (for metrics): its CloudEvent type (`undecodable` when it
   * did not decode), the outcome (`ok`, `retry` before each new try, `held` each time it is put
   * aside unacknowledged, `failed` for a defect) and the seconds from receiving it to the outcome.
   */
  readonly onOutcome?: ((type: string, outcome: WorkerOutcome, seconds: number) => void) | undefined
}

export type WorkerOutcome = "ok" | "retry" | "held" | "failed"

export const workerDefaults = { concurrency: 16, shutdownGraceMs: 10_000, retryMinMs: 100, retryMaxMs: 5_000 } as const

/**
 * What a handler returns for a message it may not acknowledge yet, though nothing failed:
 * another holder works on the same request. The worker leaves it unacknowledged,
 * frees its slot and hands it to the handler again after at most `retryAfterMs`.
 */
export interface Hold {
  readonly _tag: "Hold"
  /** When the reason to wait ends at the latest (a dedupe lease's remaining TTL); 0: now. */
  readonly retryAfterMs: number
}

export const hold = (retryAfterMs: number): Hold => ({ _tag: "Hold", retryAfterMs })

const isHold = (value: unknown): value is Hold =>
  typeof value === "object" && value !== null && "_tag" in value && value._tag === "Hold"

/**
 * The wait before a held message is tried again: the hold's end, but no longer than a backoff
 * that grows with each hold (retryMinMs doubling up to retryMaxMs). A holder that finishes early
 * is then noticed soon, and a holder that crashed is taken over when its lease ends.
 */
export const holdDelayMs = (options: WorkerOptions, retryAfterMs: number, holds: number): number => {
  const min = options.retryMinMs ?? workerDefaults.retryMinMs
  const backoff = Math.min(options.retryMaxMs ?? workerDefaults.retryMaxMs, min * 2 ** Math.min(holds, 30))
  // 0 means "ending now" (or a key without TTL, which must not become a busy loop).
  return retryAfterMs > 0 ? Math.min(retryAfterMs, backoff) : min
}

/** Capped exponential backoff with jitter: the wait before trying a failed message again. */
export const retrySchedule = (options: WorkerOptions) =>
  Schedule.min([
    Schedule.exponential(Duration.millis(options.retryMinMs ?? workerDefaults.retryMinMs)),
    Schedule.spaced(Duration.millis(options.retryMaxMs ?? workerDefaults.retryMaxMs))
  ]).pipe(Schedule.jittered)

/**
 * `Effect.retry(effect, options)`, but the retry machinery (a schedule driver and its state) is
 * only built once the first attempt failed: nearly every message succeeds at once, so building
 * it for each of them is wasted work on the hot path. Same delays, same `while`, same final error.
 */
export const retryFailed =
  <E>(options: { readonly schedule: Schedule.Schedule<unknown, E>; readonly while?: ((error: E) => boolean) | undefined }) =>
  <A, R>(attempt: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.catch(attempt, (first) => {
      // The retry starts from the failure already seen, so its first wait is the schedule's first.
      let replayed = false
      const again = Effect.suspend(() => {
        if (replayed) return attempt
        replayed = true
        return Effect.fail(first)
      })
      return options.while === undefined ? Effect.retry(again, options.schedule) : Effect.retry(again, { schedule: options.schedule, while: options.while })
    })

/** What one worker's functions share: its handler and options, its slots and its in-flight fibers. */
interface Worker<E, R> {
  readonly name: string
  readonly handle: (message: IncomingMessage) => Effect.Effect<void | Hold, E, R>
  readonly options: WorkerOptions
  readonly concurrency: number
  readonly schedule: ReturnType<typeof retrySchedule>
  // Closing the scope interrupts whatever outlived the grace period.
  readonly inFlight: FiberSet.FiberSet
  readonly permits: Semaphore.Semaphore
  // Set when shutdown begins: a held message then stays unacknowledged instead of starting again.
  readonly closing: Ref.Ref<boolean>
}

// Between taking a permit and forking, an interruption would leak the permit. The forked
// handler would inherit the mask, so it is made interruptible again (for the grace limit).
const start = <E, R>(w: Worker<E, R>, message: IncomingMessage, received: number, holds: number): Effect.Effect<unknown, never, R> =>
  Effect.uninterruptibleMask((restore) =>
    restore(w.permits.take(1)).pipe(Effect.andThen(FiberSet.run(w.inFlight, Effect.interruptible(process(w, message, received, holds)))))
  )

/** Held: the slot is free again; wait outside it, then queue for one like a new message. */
const retryHeld = <E, R>(w: Worker<E, R>, message: IncomingMessage, received: number, holds: number, held: Hold) =>
  FiberSet.run(
    w.inFlight,
    Effect.sleep(Duration.millis(holdDelayMs(w.options, held.retryAfterMs, holds))).pipe(
      Effect.andThen(Ref.get(w.closing)),
      Effect.flatMap((stopping) => (stopping ? Effect.void : start(w, message, received, holds + 1)))
    )
  ).pipe(Effect.asVoid)

const process = <E, R>(w: Worker<E, R>, message: IncomingMessage, received: number, holds: number): Effect.Effect<void, never, R> => {
  const { name, options } = w
  const type = message.decoded._tag === "Success" ? message.decoded.success.type : "undecodable"
  const report = (outcome: WorkerOutcome) => Effect.sync(() => options.onOutcome?.(type, outcome, (performance.now() - received) / 1000))
  return w.handle(message).pipe(
    Effect.tapError((error) =>
      Effect.logWarning(`${name}: message not processed, trying again`).pipe(
        Effect.annotateLogs({ topic: message.topic, error: String(error) }),
        Effect.andThen(report("retry"))
      )
    ),
    retryFailed({ schedule: w.schedule }),
    Effect.flatMap((outcome) =>
      isHold(outcome)
        ? Effect.as(report("held"), outcome)
        : message.ack.pipe(Effect.andThen(report("ok")), Effect.as(undefined))
    ),
    // A defect is a bug: log it and leave the message unacknowledged for a later session.
    Effect.catchCause((cause) =>
      Effect.logError(`${name}: message handler failed`, cause).pipe(Effect.andThen(report("failed")), Effect.as(undefined))
    ),
    Effect.ensuring(w.permits.release(1)),
    Effect.flatMap((held) => (held === undefined ? Effect.void : retryHeld(w, message, received, holds, held)))
  )
}

/** Stops taking messages and gives the in-flight ones the grace period; what is left is interrupted with the scope. */
const drain = <E, R>(w: Worker<E, R>, readers: ReadonlyArray<Fiber.Fiber<unknown, unknown>>) =>
  Effect.gen(function* () {
    const grace = Duration.millis(w.options.shutdownGraceMs ?? workerDefaults.shutdownGraceMs)
    yield* Ref.set(w.closing, true)
    yield* Fiber.interruptAll(readers)
    // All permits back means every in-flight message finished.
    // Finalizers run uninterruptibly, and a timeout cannot cut short an uninterruptible wait.
    const drained = yield* Effect.interruptible(w.permits.withPermits(w.concurrency)(Effect.void)).pipe(Effect.timeout(grace), Effect.option)
    if (drained._tag === "None") {
      yield* Effect.logWarning(`${w.name}: shutdown grace over; unfinished messages stay unacknowledged`).pipe(
        Effect.annotateLogs({ inFlight: yield* FiberSet.size(w.inFlight) })
      )
    }
  })

/**
 * Works off a subscription: at most `concurrency` messages at once, each acknowledged only after
 * `handle` succeeded. `handle` fails only for what is not the sender's fault (the store is
 * away, say); such a message is not acknowledged and is tried again after a backoff.
 *
 * A message `handle` answers with a {@link Hold} stays unacknowledged without taking a slot:
 * it waits (see {@link holdDelayMs}) and then queues for a slot again like a new message, so
 * held messages never stall the others.
 *
 * Why retry here and not wait for the broker: MQTT 5 resends an unacknowledged message only
 * when the session resumes after a reconnect, never on the same connection (mosquitto 2.0). A
 * message that failed would otherwise hold one of the broker's in-flight slots and wait for a
 * reconnect that may never come. Retrying in place is the redelivery the broker would make,
 * and the dedupe claim the handler gave back makes it safe.
 *
 * Shutdown (the scope closes): stop taking messages, give in-flight ones `shutdownGraceMs` to
 * finish, then interrupt them. An interrupted or never-started message stays unacknowledged, so
 * a persistent session gets it again when this client id reconnects.
 */
export const runWorker = <E, R>(
  name: string,
  /** One subscription's messages, or several (each read by a fiber of its own into the same slots). */
  messages: Stream.Stream<IncomingMessage> | ReadonlyArray<Stream.Stream<IncomingMessage>>,
  handle: (message: IncomingMessage) => Effect.Effect<void | Hold, E, R>,
  options: WorkerOptions = {}
): Effect.Effect<void, never, R | Scope.Scope> =>
  Effect.gen(function* () {
    const concurrency = options.concurrency ?? workerDefaults.concurrency
    const w: Worker<E, R> = {
      name, handle, options, concurrency,
      schedule: retrySchedule(options),
      inFlight: yield* FiberSet.make(),
      permits: yield* Semaphore.make(concurrency),
      closing: yield* Ref.make(false)
    }
    // A reader per stream rather than `Stream.mergeAll`: merging cost about 11 µs of CPU per
    // message, more than the rest of the worker's own steps.
    const sources: ReadonlyArray<Stream.Stream<IncomingMessage>> = Stream.isStream(messages) ? [messages] : messages
    const readers = yield* Effect.forEach(sources, (source) =>
      source.pipe(
        Stream.runForEach((message) => start(w, message, performance.now(), 0)),
        Effect.forkScoped
      )
    )
    yield* Effect.addFinalizer(() => drain(w, readers))
  })
