import { Duration, Effect, Either, Queue, Stream } from "effect"
import type { Nudges, ScopeRegistry } from "@microdcs/store"
import { publishMetadata } from "./Metadata.js"
import type { PublisherContext } from "./PublisherContext.js"
import { stateIndexTopic } from "./PublisherTopics.js"
import { drainScope, republishScope } from "./ScopeFollower.js"
import type { ScopeView } from "./StateIndex.js"

const errorText = (e: { readonly _tag: string; readonly message?: string }) => `${e._tag}: ${e.message ?? ""}`

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
export const runActiveSession = (ctx: PublisherContext, registry: ScopeRegistry, nudges: Nudges): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { options } = ctx
    const dirty = new Set<string>()
    /** Scopes republished in this broker session, with what the session knows of them. */
    const views = new Map<string, ScopeView>()
    /** Counts broker sessions that lost our retained messages: a republish begun in an earlier one does not count. */
    let brokerEpoch = 0
    /** The scopes the retained metadata lists, as published last (none yet). */
    let metadataScopes: string | undefined
    /** Scopes that have no topic (a `+`, `#` or `/` in the name): warned about once, then left alone. */
    const ignored = new Set<string>()
    // Capacity 1, sliding: a burst of nudges collapses into one round.
    const wake = yield* Queue.sliding<void>(1)
    const mark = (scopes: Iterable<string>) => {
      for (const scope of scopes) dirty.add(scope)
      wake.unsafeOffer(undefined)
    }

    yield* nudges.listen("changes", "publisher-nudge", {
      onNudge: (scope) => mark([scope]),
      // After a reconnect the nudges sent meanwhile are lost: read every scope.
      onReconnect: () => mark(views.keys())
    })

    // The first value is the connection this session starts on, which the first round fills anyway.
    yield* Effect.forkScoped(
      ctx.mqtt.sessions.pipe(
        Stream.drop(1),
        Stream.filter((session) => !session.sessionPresent),
        Stream.runForEach((session) =>
          Effect.gen(function* () {
            yield* Effect.logWarning("publisher: broker session is new; republishing every scope").pipe(
              Effect.annotateLogs({ connection: session.connection })
            )
            brokerEpoch++
            const seen = [...views.keys()]
            views.clear()
            metadataScopes = undefined
            mark(seen)
          })
        )
      )
    )

    const follow = (scope: string) =>
      Effect.gen(function* () {
        if (ignored.has(scope)) return
        const topic = stateIndexTopic(options, scope)
        if (Either.isLeft(topic)) {
          ignored.add(scope)
          return yield* Effect.logWarning("publisher: scope has no topic; not published").pipe(Effect.annotateLogs({ scope, reason: topic.left.message }))
        }
        let view = views.get(scope)
        if (view === undefined) {
          const epoch = brokerEpoch
          view = yield* republishScope(ctx, scope)
          // Republished into a broker session that has ended since: the next round does it again.
          if (epoch !== brokerEpoch) return mark([scope])
          views.set(scope, view)
        }
        yield* drainScope(ctx, scope, view)
      }).pipe(
        // Left for the next fallback round, which reads every scope again.
        Effect.catchAll((e) => Effect.logWarning("publisher: scope round failed; retried next round").pipe(Effect.annotateLogs({ scope, error: errorText(e) })))
      )

    /** Retains the metadata when the set of published scopes differs from what it lists. */
    const describe = Effect.suspend(() => {
      const scopes = [...views.keys()].sort()
      const listed = JSON.stringify(scopes)
      if (listed === metadataScopes) return Effect.void
      return publishMetadata(ctx, scopes).pipe(
        Effect.tap(() => Effect.sync(() => void (metadataScopes = listed))),
        Effect.catchAll((e) => Effect.logWarning("publisher: metadata not published; retried next round").pipe(Effect.annotateLogs({ error: errorText(e) })))
      )
    })

    mark(yield* registry.list)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.sleep(Duration.millis(options.fallbackIntervalMs)).pipe(
          Effect.zipRight(registry.list),
          Effect.map((registered) => mark([...registered, ...views.keys()])),
          Effect.catchAll((e) => Effect.logWarning("publisher: scope registry read failed").pipe(Effect.annotateLogs({ error: errorText(e) })))
        )
      )
    )
    for (;;) {
      yield* Queue.take(wake)
      const round = [...dirty]
      dirty.clear()
      yield* Effect.forEach(round, follow, { concurrency: options.scopeConcurrency, discard: true })
      yield* describe
    }
  }).pipe(
    Effect.scoped,
    Effect.catchAll((e) => Effect.logWarning("publisher: cannot start publishing").pipe(Effect.annotateLogs({ error: errorText(e) })))
  )
