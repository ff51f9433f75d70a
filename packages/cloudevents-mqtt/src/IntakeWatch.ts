import { randomUUID } from "node:crypto"
import { Deferred, Duration, Effect, Result, Option, type Scope, Stream, SubscriptionRef } from "effect"
import type { IncomingMessage } from "./Incoming.js"

/**
 * Whether the broker still delivers to this connection. mosquitto (2.0) takes one of our
 * Receive Maximum slots for each QoS 1 message it drops for being over our Maximum Packet Size,
 * and never gives it back on that connection: after `receiveMaximum` such messages it sends
 * nothing more, however small, until the client reconnects. Nothing arrives to say so, and an
 * idle island looks the same; so the watch asks. When no message came for a while, it publishes
 * a probe to a topic only this connection subscribes to. A probe the broker took (PUBACK) that
 * does not come back in time, while fewer than `receiveMaximum` messages are held here
 * unacknowledged (so the broker has a free slot by our count), is a stalled intake: reported,
 * and ended by a reconnect, which makes the broker count its slots afresh. Holding every slot
 * ourselves is backpressure, not a stall; an idle intake answers its probes.
 */

export interface IntakeHealth {
  readonly stalled: boolean
  /** What was seen, while stalled. */
  readonly reason?: string | undefined
  /** How often the watch reconnected to end a stall. */
  readonly reconnects: number
}

/** What the watch needs of a connection. */
export interface IntakeWatchDeps {
  /** How long without a message before a probe goes out, and how long the probe may take. */
  readonly periodMs: number
  readonly receiveMaximum: number
  /** The probe subscription's messages: each is acknowledged at once. */
  readonly probes: Stream.Stream<IncomingMessage>
  readonly publishProbe: (payload: Buffer) => Effect.Effect<void, unknown>
  readonly connected: Effect.Effect<boolean>
  /** Whether anything besides the probe is subscribed: without an intake there is nothing to watch. */
  readonly hasIntake: () => boolean
  readonly received: () => number
  readonly unacknowledged: () => number
  readonly reconnect: () => void
}

type ProbeOutcome = "arrived" | "missing" | "not-sent"

/** The watch's own state: its health, and the probe it waits for. */
interface Watch {
  readonly deps: IntakeWatchDeps
  readonly period: Duration.Duration
  readonly health: SubscriptionRef.SubscriptionRef<IntakeHealth>
  expected: { readonly nonce: string; readonly arrived: Deferred.Deferred<void> } | undefined
}

/** Acknowledges every probe at once and tells the one awaited that it came back. */
const answerProbes = (watch: Watch) =>
  Stream.runForEach(watch.deps.probes, (message) =>
    Effect.andThen(
      message.ack,
      Effect.suspend(() => {
        const expected = watch.expected
        return expected !== undefined && message.payload.toString() === expected.nonce ? Deferred.succeed(expected.arrived, undefined) : Effect.void
      })
    )
  )

const probe = (watch: Watch): Effect.Effect<ProbeOutcome> =>
  Effect.gen(function* () {
    const expected = { nonce: randomUUID(), arrived: yield* Deferred.make<void>() }
    watch.expected = expected
    // Not taken by the broker (away, refused): not a question of the intake; the connection's status tells.
    if (Result.isFailure(yield* Effect.result(watch.deps.publishProbe(Buffer.from(expected.nonce))))) return "not-sent"
    return Option.isSome(yield* Effect.option(Effect.timeout(Deferred.await(expected.arrived), watch.period))) ? "arrived" : "missing"
  })

const flowing = (watch: Watch) =>
  Effect.flatMap(SubscriptionRef.get(watch.health), (h) =>
    h.stalled ? Effect.andThen(SubscriptionRef.set(watch.health, { stalled: false, reconnects: h.reconnects }), Effect.logInfo("mqtt intake flowing again")) : Effect.void
  )

const stalled = (watch: Watch, reason: string) =>
  Effect.gen(function* () {
    yield* SubscriptionRef.update(watch.health, (h) => ({ stalled: true, reason, reconnects: h.reconnects + 1 }))
    yield* Effect.logWarning("mqtt intake stalled; reconnecting").pipe(Effect.annotateLogs({ reason }))
    watch.deps.reconnect()
  })

/** One look, `seen` being the count of received messages at the last one: returns the count now. */
const look = (watch: Watch, seen: number) =>
  Effect.gen(function* () {
    const { deps } = watch
    const before = deps.received()
    if (before !== seen) return yield* Effect.as(flowing(watch), before)
    if (!(yield* deps.connected) || !deps.hasIntake()) return before
    const outcome = yield* probe(watch)
    const after = deps.received()
    if (outcome === "arrived" || (outcome === "missing" && after !== before)) return yield* Effect.as(flowing(watch), after)
    const held = deps.unacknowledged()
    // Every slot held here is our own backpressure: the broker is right to wait.
    if (outcome === "missing" && held < deps.receiveMaximum) {
      yield* stalled(watch, `a probe the broker took ${Duration.format(watch.period)} ago has not come back, with ${held} of ${deps.receiveMaximum} in-flight slots held here`)
    }
    return after
  })

/** A look every period, for as long as the watch runs. */
const lookEvery = (watch: Watch, received: number) =>
  Effect.gen(function* () {
    let seen = received
    while (true) {
      yield* Effect.sleep(watch.period)
      seen = yield* look(watch, seen)
    }
  })

/** Runs the watch in the current scope; its health now and as it changes. */
export const watchIntake = (deps: IntakeWatchDeps): Effect.Effect<SubscriptionRef.SubscriptionRef<IntakeHealth>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const watch: Watch = { deps, period: Duration.millis(deps.periodMs), health: yield* SubscriptionRef.make<IntakeHealth>({ stalled: false, reconnects: 0 }), expected: undefined }
    yield* Effect.forkScoped(answerProbes(watch))
    yield* Effect.forkScoped(lookEvery(watch, deps.received()))
    return watch.health
  })
