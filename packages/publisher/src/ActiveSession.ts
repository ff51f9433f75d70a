import { Duration, Effect, Result, Option, Queue, Stream } from "effect"
import type { Nudges, ScopeRegistry } from "@microdcs/store"
import { publishMetadata } from "./Metadata.js"
import type { PublisherContext } from "./PublisherContext.js"
import { stateIndexTopic } from "./PublisherTopics.js"
import { drainScope, indexIfDue, republishScope } from "./ScopeFollower.js"
import type { ScopeView } from "./StateIndex.js"

const errorText = (e: { readonly _tag: string; readonly message?: string }) => `${e._tag}: ${e.message ?? ""}`

/** What one active session knows, updated by its rounds, its nudges and its broker sessions. */
interface SessionState {
  readonly ctx: PublisherContext
  readonly dirty: Set<string>
  /** Scopes republished in this broker session, with what the session knows of them. */
  readonly views: Map<string, ScopeView>
  /** Counts broker sessions that lost our retained messages: a republish begun in an earlier one does not count. */
  brokerEpoch: number
  /** The scopes the retained metadata lists, as published last (none yet). */
  metadataScopes: string | undefined
  /** Scopes that have no topic (a `+`, `#` or `/` in the name): warned about once, then left alone. */
  readonly ignored: Set<string>
  /** Scopes with a round already timed for their paced state index. */
  readonly pacing: Set<string>
  // Capacity 1, sliding: a burst of nudges collapses into one round.
  readonly wake: Queue.Queue<void>
}

const mark = (s: SessionState, scopes: Iterable<string>) => {
  for (const scope of scopes) s.dirty.add(scope)
  Queue.offerUnsafe(s.wake, undefined)
}

/** A round for `scope` in `ms`, when its paced state index may go out; one timer per scope at a time. */
const markLater = (s: SessionState, scope: string, ms: number) => {
  if (s.pacing.has(scope)) return Effect.void
  s.pacing.add(scope)
  const later = Effect.sync(() => {
    s.pacing.delete(scope)
    mark(s, [scope])
  })
  return Effect.asVoid(Effect.forkScoped(Effect.delay(later, Duration.millis(ms))))
}

/** A broker session that kept nothing of ours: every scope, and the metadata, count as unpublished again. */
const brokerSessionLost = (s: SessionState, connection: number) =>
  Effect.gen(function* () {
    yield* Effect.logWarning("publisher: broker session is new; republishing every scope").pipe(Effect.annotateLogs({ connection }))
    s.brokerEpoch++
    const seen = [...s.views.keys()]
    s.views.clear()
    s.metadataScopes = undefined
    mark(s, seen)
  })

/** The scope republished the first time this broker session sees it, then its change stream followed from its cursor. */
const follow = (s: SessionState, scope: string) =>
  Effect.gen(function* () {
    if (s.ignored.has(scope)) return
    const topic = stateIndexTopic(s.ctx.options, scope)
    if (Result.isFailure(topic)) {
      s.ignored.add(scope)
      return yield* Effect.logWarning("publisher: scope has no topic; not published").pipe(Effect.annotateLogs({ scope, reason: topic.failure.message }))
    }
    let view = s.views.get(scope)
    if (view === undefined) {
      const epoch = s.brokerEpoch
      view = yield* republishScope(s.ctx, scope)
      // Republished into a broker session that has ended since: the next round does it again.
      if (epoch !== s.brokerEpoch) return mark(s, [scope])
      s.views.set(scope, view)
    }
    yield* drainScope(s.ctx, scope, view)
    const wait = yield* indexIfDue(s.ctx, scope, view)
    if (Option.isSome(wait)) yield* markLater(s, scope, wait.value)
  }).pipe(
    // Left for the next fallback round, which reads every scope again.
    Effect.catch((e) => Effect.logWarning("publisher: scope round failed; retried next round").pipe(Effect.annotateLogs({ scope, error: errorText(e) })))
  )

/** Retains the metadata when the set of published scopes differs from what it lists. */
const describe = (s: SessionState) =>
  Effect.suspend(() => {
    const scopes = [...s.views.keys()].sort()
    const listed = JSON.stringify(scopes)
    if (listed === s.metadataScopes) return Effect.void
    return publishMetadata(s.ctx, scopes).pipe(
      Effect.tap(() => Effect.sync(() => void (s.metadataScopes = listed))),
      Effect.catch((e) => Effect.logWarning("publisher: metadata not published; retried next round").pipe(Effect.annotateLogs({ error: errorText(e) })))
    )
  })

/** Marks every registered and known scope every fallback interval. */
const fallbackRounds = (s: SessionState, registry: ScopeRegistry["Service"]) =>
  Effect.forever(
    Effect.sleep(Duration.millis(s.ctx.options.fallbackIntervalMs)).pipe(
      Effect.andThen(registry.list),
      Effect.map((registered) => mark(s, [...registered, ...s.views.keys()])),
      Effect.catch((e) => Effect.logWarning("publisher: scope registry read failed").pipe(Effect.annotateLogs({ error: errorText(e) })))
    )
  )

/**
 * What the active publisher does while it holds the lease; it runs until interrupted (lease lost,
 * shutdown) and returns only when it cannot start (store down), so the caller can step back.
 *
 * Scopes are found in the `scopes` registry at start and on every fallback round, and at once
 * through `nudge:changes`, whose message names the scope of every change: a nudge both wakes a
 * known scope and discovers a new one, so `ScopeRegistry.watch` is not needed beside it. Pub/sub
 * loses messages across reconnects; the fallback round re-reads every scope anyway.
 *
 * The first time a session sees a scope it republishes it from scratch (every listed job and the
 * state index), then it follows the scope's change stream from its cursor. When the MQTT
 * connection comes back without its broker session (a broker restarted without persistence has
 * lost its retained messages too), every scope counts as unseen again and is republished, and
 * so is the island's metadata.
 */
export const runActiveSession = (ctx: PublisherContext, registry: ScopeRegistry["Service"], nudges: Nudges["Service"]): Effect.Effect<void> =>
  Effect.gen(function* () {
    const s: SessionState = {
      ctx, dirty: new Set(), views: new Map(), brokerEpoch: 0, metadataScopes: undefined, ignored: new Set(), pacing: new Set(), wake: yield* Queue.sliding<void>(1)
    }
    yield* nudges.listen("changes", "publisher-nudge", {
      onNudge: (scope) => mark(s, [scope]),
      // After a reconnect the nudges sent meanwhile are lost: read every scope.
      onReconnect: () => mark(s, s.views.keys())
    })
    // The first value is the connection this session starts on, which the first round fills anyway.
    yield* Effect.forkScoped(
      ctx.mqtt.sessions.pipe(
        Stream.drop(1),
        Stream.filter((session) => !session.sessionPresent),
        Stream.runForEach((session) => brokerSessionLost(s, session.connection))
      )
    )
    mark(s, yield* registry.list)
    yield* Effect.forkScoped(fallbackRounds(s, registry))
    const described = describe(s)
    const followScope = (scope: string) => follow(s, scope)
    for (;;) {
      yield* Queue.take(s.wake)
      const round = [...s.dirty]
      s.dirty.clear()
      yield* Effect.forEach(round, followScope, { concurrency: ctx.options.scopeConcurrency, discard: true })
      yield* described
    }
  }).pipe(
    Effect.scoped,
    Effect.catch((e) => Effect.logWarning("publisher: cannot start publishing").pipe(Effect.annotateLogs({ error: errorText(e) })))
  )
