import { Duration, Effect, Fiber, FiberSet, Schedule, type Scope, Stream } from "effect"
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
   * did not decode), the outcome (`ok`, `retry` before each new try, `failed` for a defect) and
   * the seconds from receiving it to the outcome.
   */
  readonly onOutcome?: ((type: string, outcome: "ok" | "retry" | "failed", seconds: number) => void) | undefined
}

export const workerDefaults = { concurrency: 16, shutdownGraceMs: 10_000, retryMinMs: 100, retryMaxMs: 5_000 } as const

/** Capped exponential backoff with jitter: the wait before trying a failed message again. */
export const retrySchedule = (options: WorkerOptions) =>
  Schedule.exponential(Duration.millis(options.retryMinMs ?? workerDefaults.retryMinMs)).pipe(
    Schedule.union(Schedule.spaced(Duration.millis(options.retryMaxMs ?? workerDefaults.retryMaxMs))),
    Schedule.jittered
  )

/**
 * Works off a subscription: at most `concurrency` messages at once, each acknowledged only after
 * `handle` succeeded. `handle` fails only for what is not the sender's fault (the store is
 * away, say); such a message is not acknowledged and is tried again after a backoff.
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
  messages: Stream.Stream<IncomingMessage>,
  handle: (message: IncomingMessage) => Effect.Effect<void, E, R>,
  options: WorkerOptions = {}
): Effect.Effect<void, never, R | Scope.Scope> =>
  Effect.gen(function* () {
    const concurrency = options.concurrency ?? workerDefaults.concurrency
    const grace = Duration.millis(options.shutdownGraceMs ?? workerDefaults.shutdownGraceMs)
    const schedule = retrySchedule(options)
    // Closing the scope interrupts whatever outlived the grace period.
    const inFlight = yield* FiberSet.make()
    const permits = yield* Effect.makeSemaphore(concurrency)

    const process = (message: IncomingMessage) => {
      const received = performance.now()
      const type = message.decoded._tag === "Right" ? message.decoded.right.type : "undecodable"
      const report = (outcome: "ok" | "retry" | "failed") =>
        Effect.sync(() => options.onOutcome?.(type, outcome, (performance.now() - received) / 1000))
      return handle(message).pipe(
        Effect.tapError((error) =>
          Effect.logWarning(`${name}: message not processed, trying again`).pipe(
            Effect.annotateLogs({ topic: message.topic, error: String(error) }),
            Effect.zipRight(report("retry"))
          )
        ),
        Effect.retry(schedule),
        Effect.zipRight(message.ack),
        Effect.zipRight(report("ok")),
        // A defect is a bug: log it and leave the message unacknowledged for a later session.
        Effect.catchAllCause((cause) => Effect.logError(`${name}: message handler failed`, cause).pipe(Effect.zipRight(report("failed")))),
        Effect.ensuring(permits.release(1))
      )
    }

    const reader = yield* messages.pipe(
      // Between taking a permit and forking, an interruption would leak the permit. The forked
      // handler would inherit the mask, so it is made interruptible again (for the grace limit).
      Stream.runForEach((message) =>
        Effect.uninterruptibleMask((restore) =>
          restore(permits.take(1)).pipe(Effect.zipRight(FiberSet.run(inFlight, Effect.interruptible(process(message)))))
        )
      ),
      Effect.forkScoped
    )

    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        yield* Fiber.interrupt(reader)
        // All permits back means every in-flight message finished.
        // Finalizers run uninterruptibly, and a timeout cannot cut short an uninterruptible wait.
        const drained = yield* Effect.interruptible(permits.withPermits(concurrency)(Effect.void)).pipe(Effect.timeout(grace), Effect.option)
        if (drained._tag === "None") {
          yield* Effect.logWarning(`${name}: shutdown grace over; unfinished messages stay unacknowledged`).pipe(
            Effect.annotateLogs({ inFlight: yield* FiberSet.size(inFlight) })
          )
        }
      })
    )
  })
