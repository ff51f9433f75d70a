import { Deferred, Effect } from "effect"
import type { ConnectionError, InvalidInput, WrongType } from "@microdcs/store"
import type { ConditionLanguage, JournalConfig } from "./JournalConfig.js"
import type { JournalConfigStore, UnreadableConfig } from "./JournalConfigStore.js"
import { JournalNotFound, JournalNotLoaded, JournalUnreadable } from "./JournalErrors.js"
import type { CounterPredicates } from "./JournalStore.js"

/** A configured journal as held in memory: its configuration and its counters' compiled conditions. */
export interface HeldJournal {
  readonly config: JournalConfig
  readonly predicates: CounterPredicates
}

type LoadState = { readonly _tag: "Pending" } | { readonly _tag: "Loaded" } | { readonly _tag: "Failed"; readonly reason: string }

type ScopeRead = readonly [string, { readonly configs: ReadonlyArray<JournalConfig>; readonly unreadable: ReadonlyArray<UnreadableConfig> }]

const compile = (config: JournalConfig, conditions: ConditionLanguage | undefined): CounterPredicates => {
  const predicates = new Map<string, (event: unknown) => boolean>()
  for (const counter of config.counters) {
    if (counter.when === undefined || conditions === undefined) continue
    const compiled = conditions.compile(counter.when)
    if ("predicate" in compiled) predicates.set(counter.name, compiled.predicate)
  }
  return predicates
}

const byScope = <A>(entries: Iterable<readonly [string, ReadonlyArray<A>]>, scope: string | undefined): ReadonlyArray<A> =>
  [...entries]
    .filter(([s]) => scope === undefined || s === scope)
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([, items]) => items)

const reasonOf = (error: { readonly _tag: string; readonly message: string }) => `${error._tag}: ${error.message}`

/**
 * The journal configurations one process holds, by scope, the stored ones it could not read
 * (with their problems, so they are reported, never silently left out), and whether they have
 * been read at all: until they are, "no journal here" cannot be told from "not read yet", and a
 * record then fails with `JournalNotLoaded` instead of journaling nothing without a word. Plain
 * variables, each replaced whole by `reload`, which runs one at a time: what is held is always
 * what the latest reload read, never an older read that finished later.
 */
export const makeHeldConfigurations = (store: JournalConfigStore, conditions: ConditionLanguage | undefined) =>
  Effect.gen(function* () {
    let held: ReadonlyMap<string, ReadonlyArray<HeldJournal>> = new Map()
    let unreadable: ReadonlyMap<string, ReadonlyArray<UnreadableConfig>> = new Map()
    // The scopes read so far; "all" once a reload of every scope succeeded.
    let read: "all" | ReadonlySet<string> = new Set()
    let state: LoadState = { _tag: "Pending" }
    // Completed by the first load of every scope, whether it succeeded or failed.
    const settled = yield* Deferred.make<void>()
    const oneAtATime = yield* Effect.makeSemaphore(1)

    const apply = (scope: string | undefined, results: ReadonlyArray<ScopeRead>): void => {
      const nextHeld = new Map(scope === undefined ? [] : held)
      const nextUnreadable = new Map(scope === undefined ? [] : unreadable)
      for (const [s, r] of results) {
        if (r.configs.length === 0) nextHeld.delete(s)
        else nextHeld.set(s, r.configs.map((config) => ({ config, predicates: compile(config, conditions) })))
        if (r.unreadable.length === 0) nextUnreadable.delete(s)
        else nextUnreadable.set(s, r.unreadable)
      }
      held = nextHeld
      unreadable = nextUnreadable
      read = scope === undefined ? "all" : read === "all" ? read : new Set([...read, scope])
    }

    const settle = (next: LoadState) =>
      Effect.suspend(() => {
        state = next
        return Deferred.succeed(settled, undefined)
      })

    /**
     * The load of every scope failed (or what would run it did): recorded unless a load already
     * succeeded, whose configurations are still the best known.
     */
    const loadFailed = (error: { readonly _tag: string; readonly message: string }) =>
      Effect.suspend(() => (state._tag === "Loaded" ? Effect.void : settle({ _tag: "Failed", reason: reasonOf(error) })))

    /** Reads the configurations of `scope` (every registered scope when absent) into memory. */
    const reload = (scope?: string): Effect.Effect<void, InvalidInput | WrongType | ConnectionError> =>
      oneAtATime
        .withPermits(1)(
          Effect.gen(function* () {
            const scopes = scope === undefined ? yield* store.scopes : [scope]
            const results = yield* Effect.forEach(scopes, (s) => Effect.map(store.read(s, conditions), (r) => [s, r] as const))
            apply(scope, results)
          })
        )
        .pipe(
          Effect.tapBoth({
            onSuccess: () => (scope === undefined ? settle({ _tag: "Loaded" }) : Effect.void),
            onFailure: (error) => (scope === undefined ? loadFailed(error) : Effect.void)
          })
        )

    /**
     * Waits until the configurations of every scope have been read once; fails with
     * `JournalNotLoaded` while that read has failed and no later one succeeded.
     */
    const whenLoaded: Effect.Effect<void, JournalNotLoaded> = Effect.suspend(() => {
      if (state._tag === "Loaded") return Effect.void
      if (state._tag === "Failed") return Effect.fail(new JournalNotLoaded({ scope: undefined, reason: state.reason }))
      return Effect.zipRight(Deferred.await(settled), Effect.suspend(() => whenLoaded))
    })

    /** Succeeds when the configurations of `scope` (of any scope, when absent) have been read; else says why not. */
    const loaded = (scope: string | undefined): Effect.Effect<void, JournalNotLoaded> => {
      const known = read === "all" || (scope === undefined ? read.size > 0 : read.has(scope))
      if (known) return Effect.void
      const reason = state._tag === "Failed" ? state.reason : "not read yet"
      return Effect.fail(new JournalNotLoaded({ scope, reason }))
    }

    /** One held journal; one stored but unreadable is `JournalUnreadable` with its problems. */
    const journal = (scope: string, name: string): Effect.Effect<HeldJournal, JournalNotFound | JournalUnreadable> => {
      const found = held.get(scope)?.find((j) => j.config.name === name)
      if (found !== undefined) return Effect.succeed(found)
      const broken = unreadable.get(scope)?.find((u) => u.journal === name)
      return broken === undefined ? Effect.fail(new JournalNotFound({ scope, journal: name })) : Effect.fail(new JournalUnreadable(broken))
    }

    return {
      reload,
      loadFailed,
      whenLoaded,
      loaded,
      journal,
      /** The held journals of one scope (none when it has none). */
      ofScope: (scope: string): ReadonlyArray<HeldJournal> => held.get(scope) ?? [],
      /** Every held journal (of `scope` only, when given), by scope. */
      all: (scope?: string): ReadonlyArray<HeldJournal> => byScope(held.entries(), scope),
      /** The stored configurations that do not read back (of `scope` only, when given), by scope. */
      unreadable: (scope?: string): ReadonlyArray<UnreadableConfig> => byScope(unreadable.entries(), scope)
    } as const
  })
