import { Cause, Clock, Context, Deferred, Duration, Effect, Layer, Option, type Scope } from "effect"
import { MqttConnection } from "@microdcs/cloudevents-mqtt"
import {
  ChangeStream,
  IndexScores,
  type InvalidInput,
  JobOrderDao,
  JobResponseDao,
  Nudges,
  PublisherCursors,
  PublisherLease,
  ScopeRegistry,
  type Valkey
} from "@microdcs/store"
import { runActiveSession } from "./ActiveSession.js"
import { holdLease, tryAcquire } from "./LeaseKeeper.js"
import type { PublisherContext } from "./PublisherContext.js"
import { type PublisherOptions, type ResolvedPublisherOptions, resolvePublisherOptions } from "./PublisherOptions.js"
import { makeStats, type PublisherStats, type Stats } from "./PublisherStats.js"

/** A running publisher instance: active (holding the lease and publishing) or standby. */
export interface PublisherService {
  readonly instanceId: string
  readonly stats: Effect.Effect<PublisherStats>
  /** Holds the lease and publishes now (for `/readyz` and metrics). */
  readonly isActive: Effect.Effect<boolean>
}

export class Publisher extends Context.Service<Publisher, PublisherService>()("@microdcs/publisher/Publisher") {}

/** Everything a publisher reads and writes through: the store's services and one MQTT connection. */
export type PublisherRequirements =
  | MqttConnection
  | Valkey
  | PublisherLease
  | PublisherCursors
  | ChangeStream
  | ScopeRegistry
  | JobOrderDao
  | JobResponseDao

/** The small DAOs the publisher builds over `Valkey` itself, so its requirements stay as they were. */
const PublisherStoreServices = Layer.merge(IndexScores.Default, Nudges.Default)

/** What the publisher's cycle works with. */
interface PublisherDeps {
  readonly opts: ResolvedPublisherOptions
  readonly lease: PublisherLease["Service"]
  readonly registry: ScopeRegistry["Service"]
  readonly nudges: Nudges["Service"]
  readonly stats: Stats
  /** The session's context but its fence, which each activation makes. */
  readonly services: Omit<PublisherContext, "fence">
  readonly releaseLease: Effect.Effect<void>
}

// A defect in the session must not end the loop: step back, let the lease go, try again.
const session = (deps: PublisherDeps, ctx: PublisherContext) =>
  runActiveSession(ctx, deps.registry, deps.nudges).pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("publisher: session failed", cause)
    )
  )

/** Publishes while the lease is held: the session raced against the lease keeper and the fence. */
const publishWhileHeld = (deps: PublisherDeps, sentAt: number) =>
  Effect.gen(function* () {
    const { lease, opts, stats } = deps
    // The fence: before every batch the session checks that the lease still names this
    // instance. When it does not, the batch waits forever and the race below ends the session
    // at once, so nothing is published after another instance took over, even between renewals.
    const lost = yield* Deferred.make<void>()
    const fence = lease.holder.pipe(
      Effect.flatMap((holder) =>
        Option.contains(holder, opts.instanceId) ? Effect.void : Deferred.succeed(lost, undefined).pipe(Effect.andThen(Effect.never))
      )
    )
    const fenced = Deferred.await(lost).pipe(Effect.andThen(Effect.logWarning("publisher: the lease names another instance; stopping")))
    yield* stats.setActive(true).pipe(
      Effect.andThen(Effect.raceAll([session(deps, { ...deps.services, fence }), holdLease(lease, opts, sentAt), fenced])),
      Effect.ensuring(stats.setActive(false))
    )
  })

/** One cycle: take the lease and publish while it is held, then step back and wait. */
const cycle = (deps: PublisherDeps) =>
  Effect.gen(function* () {
    const { opts, stats } = deps
    const sentAt = yield* Clock.currentTimeMillis
    if (yield* tryAcquire(deps.lease, opts)) {
      yield* stats.add("activations")
      yield* Effect.logInfo("publisher: active")
      yield* publishWhileHeld(deps, sentAt)
      yield* deps.releaseLease
      yield* Effect.logInfo("publisher: standby")
    }
    yield* Effect.sleep(Duration.millis(opts.acquireIntervalMs))
  })

const publisherDepsOf = (options: PublisherOptions) =>
  Effect.gen(function* () {
    const opts = yield* resolvePublisherOptions(options)
    const lease = yield* PublisherLease
    const registry = yield* ScopeRegistry
    const nudges = yield* Nudges
    const stats = yield* makeStats(opts.instanceId)
    const services = {
      options: opts,
      mqtt: yield* MqttConnection,
      scores: yield* IndexScores,
      jobOrders: yield* JobOrderDao,
      responses: yield* JobResponseDao,
      cursors: yield* PublisherCursors,
      changes: yield* ChangeStream,
      stats
    } satisfies Omit<PublisherContext, "fence">
    const releaseLease = lease.release(opts.instanceId).pipe(
      Effect.catch((e) => Effect.logWarning("publisher: lease release failed; it expires by itself").pipe(Effect.annotateLogs({ error: e._tag })))
    )
    return { opts, lease, registry, nudges, stats, services, releaseLease } satisfies PublisherDeps
  })

/**
 * Starts a publisher in the current scope. It loops: take the lease; while it
 * holds it, run the active session raced against the lease keeper, so losing the lease ends
 * publishing at once; then release what it may still hold and try again after
 * `acquireIntervalMs`. A standby therefore takes over within about one TTL of the active
 * instance dying, and at once (next try) after it shut down cleanly. Closing the scope stops
 * publishing, then releases the lease.
 */
export const makePublisher = (options: PublisherOptions = {}): Effect.Effect<PublisherService, InvalidInput, Scope.Scope | PublisherRequirements> =>
  Effect.gen(function* () {
    const deps = yield* publisherDepsOf(options)
    const { opts, stats } = deps
    // Finalizers run in reverse: the loop is interrupted (publishing stops) before the release.
    yield* Effect.addFinalizer(() => deps.releaseLease)
    yield* Effect.forkScoped(Effect.forever(cycle(deps)).pipe(Effect.annotateLogs({ component: "publisher", instance: opts.instanceId })))
    return { instanceId: opts.instanceId, stats: stats.get, isActive: stats.isActive } satisfies PublisherService
  }).pipe(Effect.provide(PublisherStoreServices))

/** The publisher as a layer: it runs (active or standby) while the layer is alive. */
export const PublisherLive = (options: PublisherOptions = {}): Layer.Layer<Publisher, InvalidInput, PublisherRequirements> =>
  Layer.effect(Publisher, makePublisher(options))
