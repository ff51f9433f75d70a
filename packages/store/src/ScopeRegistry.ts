import { Duration, Effect, Queue, Schedule, Stream, Context, Layer } from "effect"
import { type ConnectionError, StoreUnavailable, type WrongType } from "./Errors.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey, type ValkeyService } from "./Valkey.js"
import { dedicated } from "./RawDoor.js"

export interface WatchOptions {
  /** How often the registry is re-read, whatever the nudges say (default 1 s). */
  readonly pollInterval?: Duration.Input | undefined
}

/** What the registry's functions share: the connection, `nudge:changes` and the read of the `scopes` set. */
interface RegistryDeps {
  readonly valkey: ValkeyService
  readonly nudgeChannel: string
  /** Every registered scope, sorted. */
  readonly list: Effect.Effect<ReadonlyArray<string>, WrongType | ConnectionError>
}

const listScopes = (valkey: ValkeyService, scopesKey: string): Effect.Effect<ReadonlyArray<string>, WrongType | ConnectionError> =>
  typedCommand(valkey, "list scopes", scopesKey, "set", (c) => c.smembers(scopesKey)).pipe(Effect.map((scopes) => scopes.sort()))

/** Listens on `nudge:changes` on a connection of its own: a nudge naming a scope not seen yet wakes a re-read. */
const subscribeNudges = (deps: RegistryDeps, seen: ReadonlySet<string>, wake: Queue.Queue<void>) =>
  Effect.gen(function* () {
    const { nudgeChannel } = deps
    const subscriber = yield* dedicated(deps.valkey, "scope-watch")
    subscriber.on("message", (channel: string, scope: string) => {
      if (channel === nudgeChannel && !seen.has(scope)) Queue.offerUnsafe(wake, undefined)
    })
    // After a reconnect: subscribe again (the client does not), and re-read what was missed.
    subscriber.on("ready", () => {
      subscriber.subscribe(nudgeChannel).catch(() => undefined)
      Queue.offerUnsafe(wake, undefined)
    })
    yield* Effect.tryPromise({
      try: () => subscriber.subscribe(nudgeChannel),
      catch: (error) =>
        new StoreUnavailable({ operation: "subscribe nudge:changes", message: error instanceof Error ? error.message : String(error) })
    })
  })

/** The registered scopes not in `seen` yet, which it then holds. */
const freshScopes = (list: RegistryDeps["list"], seen: Set<string>) =>
  list.pipe(
    Effect.map((scopes) => {
      const fresh = scopes.filter((scope) => !seen.has(scope))
      for (const scope of fresh) seen.add(scope)
      return fresh
    })
  )

/** A later round's read: a failure is logged and the next round tries again. */
const laterRound = (discover: ReturnType<typeof freshScopes>) =>
  discover.pipe(
    Effect.catch((error) =>
      Effect.logWarning("scope registry read failed; retrying next round").pipe(
        Effect.annotateLogs({ error: error._tag, message: error.message }),
        Effect.as<ReadonlyArray<string>>([])
      )
    )
  )

/**
 * Newly discovered scopes: every known scope at start, then each new one once, found by a
 * periodic re-read of the registry and at once after a nudge on `nudge:changes` naming a
 * scope not seen yet. Nudges are only wake-ups (pub/sub loses messages across reconnects);
 * the set is the truth, so the periodic re-read still finds a scope whose nudge was lost.
 *
 * The first read fails the stream (the caller learns at start that the store is down); a
 * later failed read is logged and the next round tries again, so an outage does not end it.
 */
const watch = (deps: RegistryDeps, options: WatchOptions = {}): Stream.Stream<string, WrongType | ConnectionError> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const pollInterval = Duration.fromInputUnsafe(options.pollInterval ?? Duration.seconds(1))
      const seen = new Set<string>()
      // Sliding, capacity 1: a burst of nudges collapses into one re-read.
      const wake = yield* Queue.sliding<void>(1)
      yield* Effect.addFinalizer(() => Queue.shutdown(wake))
      // Subscribe before the first read, so a scope created in between is nudged, not missed.
      yield* subscribeNudges(deps, seen, wake)
      const discover = freshScopes(deps.list, seen)
      const later = laterRound(discover)
      const rounds = Stream.merge(Stream.fromSchedule(Schedule.spaced(pollInterval)), Stream.fromQueue(wake)).pipe(Stream.mapEffect(() => later))
      return Stream.fromEffect(discover).pipe(Stream.concat(rounds), Stream.flattenIterable)
    })
  )

/**
 * The scope registry (`scopes`): every scope that holds data. Consumers learn
 * scopes from it at start and keep discovering new ones with `watch`.
 */
export class ScopeRegistry extends Context.Service<ScopeRegistry>()("@microdcs/store/ScopeRegistry", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const list = listScopes(valkey, valkey.keys.key("scopes", {}) as string)
    const deps: RegistryDeps = { valkey, nudgeChannel: valkey.keys.key("nudge", { kind: "changes" }) as string, list }
    return { list, watch: (options?: WatchOptions) => watch(deps, options) } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
