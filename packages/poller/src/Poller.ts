import { Context, Duration, Effect, Fiber, Layer, Queue, Scope, Semaphore } from "effect"
import {
  type ConnectionError,
  type ConsumerHeartbeat,
  ConsumerHeartbeats,
  InvalidInput,
  Nudges,
  ScopeRegistry,
  Valkey,
  type ValkeyService,
  ValkeyStreams,
  type WrongType
} from "@microdcs/store"
import { type PollerOptions, type ResolvedOptions, resolveOptions } from "./PollerOptions.js"
import { makeStats, type PollerStats, type Stats } from "./PollerStats.js"
import { runWorker, type WorkerContext } from "./ScopeWorker.js"
import { batchRunner, entryRunner, type RunnerEnv } from "./BatchRunner.js"
import { makeWaker, type Waker } from "./Waker.js"

/** A running poller. It stops when the scope it was made in closes. */
export interface Poller {
  readonly kind: string
  readonly group: string
  readonly consumer: string
  readonly stats: Effect.Effect<PollerStats>
  /** Scopes it consumes (each has its group and a worker). */
  readonly scopes: Effect.Effect<ReadonlyArray<string>>
  /** Reads `scope` now, as a nudge would (discovering it if it is new). */
  readonly wake: (scope: string) => Effect.Effect<void>
}

/** The tag for an application with one poller; with several, make your own tags over `makePoller`. */
export class ValkeyPoller extends Context.Service<ValkeyPoller, Poller>()("@microdcs/poller/ValkeyPoller") {}

interface Worker {
  readonly waker: Waker
  readonly fiber: Fiber.Fiber<void>
}

/** The small DAOs the poller builds over `Valkey` itself, so it still needs only `Valkey` and `ValkeyStreams`. */
const PollerStoreServices = Layer.mergeAll(ScopeRegistry.Default, Nudges.Default, ConsumerHeartbeats.Default)

const errorText = (e: { readonly _tag: string; readonly message?: string }) => `${e._tag}: ${e.message ?? ""}`

/** What the poller's functions share: its stores, its workers by scope and whether shutdown began. */
interface PollerDeps<R> {
  readonly opts: ResolvedOptions
  readonly valkey: ValkeyService
  readonly streams: ValkeyStreams["Service"]
  readonly stats: Stats
  readonly ctx: WorkerContext<R>
  readonly workers: Map<string, Worker>
  readonly discovery: Semaphore.Semaphore
  readonly wakes: Queue.Queue<string>
  /** Set once shutdown begins, read by plain code per entry and per round. */
  readonly shutdown: { stopping: boolean }
}

const exactlyOneHandler = <E, R>(options: PollerOptions<E, R>): Effect.Effect<void, InvalidInput> => {
  const handlers = (typeof options.handler === "function" ? 1 : 0) + (typeof options.handleBatch === "function" ? 1 : 0)
  return handlers === 1 ? Effect.void : Effect.fail(new InvalidInput({ field: "handler", message: "give exactly one of handler (per entry) and handleBatch (per batch)" }))
}

/** Alive before the first read, so no other consumer ever takes an entry this one just read; removed when the scope closes. */
const keepHeartbeat = (heartbeat: ConsumerHeartbeat, opts: ResolvedOptions) =>
  Effect.gen(function* () {
    yield* heartbeat.beat
    yield* Effect.addFinalizer(() =>
      heartbeat.forget.pipe(
        Effect.catch((e) => Effect.logWarning("poller: cannot remove the heartbeat; it expires by itself").pipe(Effect.annotateLogs({ error: errorText(e) })))
      )
    )
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.sleep(Duration.millis(opts.heartbeatIntervalMs)).pipe(
          Effect.andThen(heartbeat.beat),
          Effect.catch((e) => Effect.logWarning("poller: heartbeat renewal failed").pipe(Effect.annotateLogs({ error: errorText(e) })))
        )
      )
    )
  })

/** Wakes every worker to see the shutdown and waits for them up to the grace; what is left is interrupted with the worker scope. */
const stopWorkers = <R>({ workers, shutdown, opts }: PollerDeps<R>) =>
  Effect.gen(function* () {
    shutdown.stopping = true
    // Sleeping workers see it now; busy ones after their current round.
    for (const w of workers.values()) w.waker.wake()
    // Finalizers run uninterruptibly, and a timeout there would wait for its effect anyway.
    const finished = yield* Effect.interruptible(
      Fiber.awaitAll([...workers.values()].map((w) => w.fiber)).pipe(Effect.timeout(Duration.millis(opts.shutdownGraceMs)))
    ).pipe(Effect.option)
    if (finished._tag === "None") {
      yield* Effect.logWarning("poller: handlers still running after the shutdown grace are interrupted; their entries stay pending")
    }
  })

/** Creates the scope's group and worker, once; serialized so two wakes never start two workers. */
const discover = <R>(deps: PollerDeps<R>, workerScope: Scope.Scope, scope: string) =>
  deps.discovery.withPermits(1)(
    Effect.gen(function* () {
      const { opts, streams, workers } = deps
      const known = workers.get(scope)
      if (known || deps.shutdown.stopping) return known?.waker
      const stream = yield* deps.valkey.key(opts.stream, { scope })
      const deadLetter = yield* streams.deadLetterKey(opts.kind, scope)
      yield* streams.ensureGroup(stream, opts.group, opts.groupStartId)
      const waker = makeWaker()
      const fiber = yield* Effect.forkIn(runWorker(deps.ctx, scope, stream, deadLetter, waker), workerScope)
      workers.set(scope, { waker, fiber })
      deps.stats.move("scopes", 1)
      return waker
    })
  )

const signalScope = <R>(deps: PollerDeps<R>, workerScope: Scope.Scope, scope: string) =>
  Effect.gen(function* () {
    const waker = deps.workers.get(scope)?.waker ?? (yield* discover(deps, workerScope, scope))
    waker?.wake()
  }).pipe(
    Effect.catch((e) =>
      Effect.logWarning("poller: cannot consume scope; tried again on the next fallback round").pipe(
        Effect.annotateLogs({ scope, error: errorText(e) })
      )
    )
  )

/** Reads nudged scopes at once, and every scope after a reconnect. */
const listenForNudges = <R>({ opts, workers, wakes }: PollerDeps<R>, nudges: Nudges["Service"]) =>
  nudges.listen(opts.kind, `poller-nudge-${opts.kind}`, {
    // A known scope is woken right here in plain code; only a new one goes to the discovering fiber.
    onNudge: (scope) => {
      const worker = workers.get(scope)
      if (worker) worker.waker.wake()
      else Queue.offerUnsafe(wakes, scope)
    },
    // Nudges sent while the connection was away are lost, so read everything.
    onReconnect: () => {
      for (const worker of workers.values()) worker.waker.wake()
    }
  })

/** The first round now, then a fiber for new scopes woken and one for the fallback rounds. */
const startRounds = <R>(deps: PollerDeps<R>, workerScope: Scope.Scope, registry: ScopeRegistry["Service"]) =>
  Effect.gen(function* () {
    /** The fallback round: learn new scopes from the registry and wake every scope. */
    const refresh = Effect.gen(function* () {
      const registered = yield* registry.list
      for (const scope of new Set([...registered, ...deps.workers.keys()])) yield* signalScope(deps, workerScope, scope)
    })
    yield* refresh
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(deps.wakes), (scope) => signalScope(deps, workerScope, scope))))
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.sleep(Duration.millis(deps.opts.fallbackIntervalMs)).pipe(
          Effect.andThen(refresh),
          Effect.catch((e) => Effect.logWarning("poller: fallback round failed").pipe(Effect.annotateLogs({ error: errorText(e) })))
        )
      )
    )
  })

/** The poller's dependencies: the services it reads through, its stats and the context its workers share. */
const pollerDepsOf = <E, R>(options: PollerOptions<E, R>, opts: ResolvedOptions) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const streams = yield* ValkeyStreams
    const registry = yield* ScopeRegistry
    const nudges = yield* Nudges
    const stats = yield* makeStats(opts.kind, opts.group)
    const shutdown = { stopping: false }
    const heartbeat = yield* (yield* ConsumerHeartbeats).of(opts, opts.heartbeatTtlMs)
    const isStopping = () => shutdown.stopping
    const env: RunnerEnv = { permits: yield* Semaphore.make(opts.concurrency), concurrency: opts.concurrency, stats, isStopping }
    const run = options.handleBatch ? batchRunner(options.handleBatch, env) : entryRunner(options.handler, env)
    const ctx: WorkerContext<R> = { options: opts, streams, heartbeat, run, stats, isStopping }
    const deps: PollerDeps<R> = {
      opts, valkey, streams, stats, ctx, shutdown,
      workers: new Map<string, Worker>(),
      discovery: yield* Semaphore.make(1),
      wakes: yield* Queue.unbounded<string>()
    }
    return { deps, registry, nudges, heartbeat }
  })

/**
 * Starts a consumer for one stream kind over every scope: it subscribes to
 * `nudge:{kind}` on a connection of its own and reads a nudged scope at once; every
 * `fallbackIntervalMs` it re-reads the `scopes` registry and reads every scope, because pub/sub
 * loses messages while reconnecting. A scope's consumer group is created when the scope is first
 * seen. Closing the scope stops reading, lets in-flight handlers finish and acknowledge (up to
 * `shutdownGraceMs`), then interrupts what is left; interrupted entries stay pending.
 */
export const makePoller = <E, R>(
  options: PollerOptions<E, R>
): Effect.Effect<Poller, InvalidInput | WrongType | ConnectionError, Valkey | ValkeyStreams | Scope.Scope | R> =>
  Effect.gen(function* () {
    const opts = yield* resolveOptions(options)
    yield* exactlyOneHandler(options)
    const { deps, registry, nudges, heartbeat } = yield* pollerDepsOf(options, opts)
    yield* keepHeartbeat(heartbeat, opts)
    // Finalizers run in reverse order: the nudge and fallback fibers (forked below) stop first,
    // then `stopWorkers` waits for the workers, then the worker scope interrupts what is left; only
    // then the heartbeat stops and is removed, so nobody takes over an entry still being handled.
    const workerScope = yield* Scope.fork(yield* Effect.scope, "parallel")
    yield* Effect.addFinalizer(() => stopWorkers(deps))
    yield* listenForNudges(deps, nudges)
    yield* startRounds(deps, workerScope, registry)
    return {
      kind: opts.kind,
      group: opts.group,
      consumer: opts.consumer,
      stats: deps.stats.get,
      scopes: Effect.sync(() => [...deps.workers.keys()].sort()),
      wake: (scope: string) => Queue.offer(deps.wakes, scope).pipe(Effect.asVoid)
    } satisfies Poller
  }).pipe(Effect.annotateLogs({ poller: options.kind, group: options.group }), Effect.provide(PollerStoreServices))

/** The poller as a layer: it runs while the layer is alive. */
export const layer = <E, R>(
  options: PollerOptions<E, R>
): Layer.Layer<ValkeyPoller, InvalidInput | WrongType | ConnectionError, Valkey | ValkeyStreams | R> => Layer.effect(ValkeyPoller, makePoller(options))
