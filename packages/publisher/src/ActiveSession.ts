import { Duration, Effect, Either, Queue } from "effect"
import { StoreUnavailable, type ScopeRegistry, type ValkeyService } from "@microdcs/store"
import type { PublisherContext } from "./PublisherContext.js"
import { stateIndexTopic } from "./PublisherTopics.js"
import { drainScope, republishScope } from "./ScopeFollower.js"

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
 * state index), then it follows the scope's change stream from its cursor.
 */
export const runActiveSession = (ctx: PublisherContext, registry: ScopeRegistry, valkey: ValkeyService): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { options } = ctx
    const dirty = new Set<string>()
    /** Scopes republished in this session. */
    const known = new Set<string>()
    /** Scopes that have no topic (a `+`, `#` or `/` in the name): warned about once, then left alone. */
    const ignored = new Set<string>()
    // Capacity 1, sliding: a burst of nudges collapses into one round.
    const wake = yield* Queue.sliding<void>(1)
    const mark = (scopes: Iterable<string>) => {
      for (const scope of scopes) dirty.add(scope)
      wake.unsafeOffer(undefined)
    }

    const channel = yield* valkey.key("nudge", { kind: "changes" })
    const subscriber = yield* valkey.dedicated("publisher-nudge", { commandTimeoutMs: undefined })
    subscriber.on("message", (from: string, scope: string) => {
      if (from === channel) mark([scope])
    })
    // After a reconnect the nudges sent meanwhile are lost: read every scope.
    subscriber.on("ready", () => mark(known))
    yield* Effect.tryPromise({
      try: () => subscriber.subscribe(channel),
      catch: (error) => new StoreUnavailable({ operation: "SUBSCRIBE nudge:changes", message: error instanceof Error ? error.message : String(error) })
    })

    const follow = (scope: string) =>
      Effect.gen(function* () {
        if (ignored.has(scope)) return
        const topic = stateIndexTopic(options, scope)
        if (Either.isLeft(topic)) {
          ignored.add(scope)
          return yield* Effect.logWarning("publisher: scope has no topic; not published").pipe(Effect.annotateLogs({ scope, reason: topic.left.message }))
        }
        if (!known.has(scope)) {
          yield* republishScope(ctx, scope)
          known.add(scope)
        }
        yield* drainScope(ctx, scope)
      }).pipe(
        // Left for the next fallback round, which reads every scope again.
        Effect.catchAll((e) => Effect.logWarning("publisher: scope round failed; retried next round").pipe(Effect.annotateLogs({ scope, error: errorText(e) })))
      )

    mark(yield* registry.list)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.sleep(Duration.millis(options.fallbackIntervalMs)).pipe(
          Effect.zipRight(registry.list),
          Effect.map((registered) => mark([...registered, ...known])),
          Effect.catchAll((e) => Effect.logWarning("publisher: scope registry read failed").pipe(Effect.annotateLogs({ error: errorText(e) })))
        )
      )
    )
    for (;;) {
      yield* Queue.take(wake)
      const round = [...dirty]
      dirty.clear()
      yield* Effect.forEach(round, follow, { concurrency: options.scopeConcurrency, discard: true })
    }
  }).pipe(
    Effect.scoped,
    Effect.catchAll((e) => Effect.logWarning("publisher: cannot start publishing").pipe(Effect.annotateLogs({ error: errorText(e) })))
  )
