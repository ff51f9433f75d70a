import { Deferred, Effect, Semaphore } from "effect"
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
 * What one process holds. Plain fields, each replaced whole by `reload`, which runs one at a time:
 * what is held is always what the latest reload read, never an older read that finished later.
 */
interface Held {
  journals: ReadonlyMap<string, ReadonlyArray<HeldJournal>>
  unreadable: ReadonlyMap<string, ReadonlyArray<UnreadableConfig>>
  /** The scopes read so far; "all" once a reload of every scope succeeded. */
  read: "all" | ReadonlySet<string>
  state: LoadState
}

interface HeldDeps {
  readonly store: JournalConfigStore["Service"]
  readonly conditions: ConditionLanguage | undefined
  readonly held: Held
  /** Completed by the first load of every scope, whether it succeeded or failed. */
  readonly settled: Deferred.Deferred<void>
  readonly oneAtATime: Semaphore.Semaphore
}

const apply = (deps: HeldDeps, scope: string | undefined, results: ReadonlyArray<ScopeRead>): void => {
  const { held } = deps
  const nextHeld = new Map(scope === undefined ? [] : held.journals)
  const nextUnreadable = new Map(scope === undefined ? [] : held.unreadable)
  for (const [s, r] of results) {
    if (r.configs.length === 0) nextHeld.delete(s)
    else nextHeld.set(s, r.configs.map((config) => ({ config, predicates: compile(config, deps.conditions) })))
    if (r.unreadable.length === 0) nextUnreadable.delete(s)
    else nextUnreadable.set(s, r.unreadable)
  }
  held.journals = nextHeld
  held.unreadable = nextUnreadable
  held.read = scope === undefined ? "all" : held.read === "all" ? held.read : new Set([...held.read, scope])
}

const settle = (deps: HeldDeps, next: LoadState) =>
  Effect.suspend(() => {
    deps.held.state = next
    return Deferred.succeed(deps.settled, undefined)
  })

/**
 * The load of every scope failed (or what would run it did): recorded unless a load already
 * succeeded, whose configurations are still the best known.
 */
const loadFailed = (deps: HeldDeps, error: { readonly _tag: string; readonly message: string }) =>
  Effect.suspend(() => (deps.held.state._tag === "Loaded" ? Effect.void : settle(deps, { _tag: "Failed", reason: reasonOf(error) })))

/** Reads the configurations of `scope` (every registered scope when absent) into memory. */
const reload = (deps: HeldDeps, scope?: string): Effect.Effect<void, InvalidInput | WrongType | ConnectionError> =>
  deps.oneAtATime
    .withPermits(1)(
      Effect.gen(function* () {
        const { store, conditions } = deps
        const scopes = scope === undefined ? yield* store.scopes : [scope]
        const results = yield* Effect.forEach(scopes, (s) => Effect.map(store.read(s, conditions), (r) => [s, r] as const))
        apply(deps, scope, results)
      })
    )
    .pipe(
      Effect.tapError((error) => (scope === undefined ? loadFailed(deps, error) : Effect.void)),
      Effect.tap(() => (scope === undefined ? settle(deps, { _tag: "Loaded" }) : Effect.void))
    )

/**
 * Waits until the configurations of every scope have been read once; fails with
 * `JournalNotLoaded` while that read has failed and no later one succeeded.
 */
const whenLoaded = (deps: HeldDeps): Effect.Effect<void, JournalNotLoaded> =>
  Effect.suspend(() => {
    const { state } = deps.held
    if (state._tag === "Loaded") return Effect.void
    if (state._tag === "Failed") return Effect.fail(new JournalNotLoaded({ scope: undefined, reason: state.reason }))
    return Effect.andThen(Deferred.await(deps.settled), whenLoaded(deps))
  })

/** Succeeds when the configurations of `scope` (of any scope, when absent) have been read; else says why not. */
const loaded = (held: Held, scope: string | undefined): Effect.Effect<void, JournalNotLoaded> => {
  const { read, state } = held
  const known = read === "all" || (scope === undefined ? read.size > 0 : read.has(scope))
  if (known) return Effect.void
  const reason = state._tag === "Failed" ? state.reason : "not read yet"
  return Effect.fail(new JournalNotLoaded({ scope, reason }))
}

/** One held journal; one stored but unreadable is `JournalUnreadable` with its problems. */
const journal = (held: Held, scope: string, name: string): Effect.Effect<HeldJournal, JournalNotFound | JournalUnreadable> => {
  const found = held.journals.get(scope)?.find((j) => j.config.name === name)
  if (found !== undefined) return Effect.succeed(found)
  const broken = held.unreadable.get(scope)?.find((u) => u.journal === name)
  return broken === undefined ? Effect.fail(new JournalNotFound({ scope, journal: name })) : Effect.fail(new JournalUnreadable(broken))
}

/**
 * The journal configurations one process holds, by scope, the stored ones it could not read
 * (with their problems, so they are reported, never silently left out), and whether they have
 * been read at all: until they are, "no journal here" cannot be told from "not read yet", and a
 * record then fails with `JournalNotLoaded` instead of journaling nothing without a word.
 */
export const makeHeldConfigurations = (store: JournalConfigStore["Service"], conditions: ConditionLanguage | undefined) =>
  Effect.gen(function* () {
    const held: Held = { journals: new Map(), unreadable: new Map(), read: new Set(), state: { _tag: "Pending" } }
    const deps: HeldDeps = { store, conditions, held, settled: yield* Deferred.make<void>(), oneAtATime: yield* Semaphore.make(1) }
    return {
      reload: (scope?: string) => reload(deps, scope),
      loadFailed: (error: { readonly _tag: string; readonly message: string }) => loadFailed(deps, error),
      whenLoaded: whenLoaded(deps),
      loaded: (scope: string | undefined) => loaded(held, scope),
      journal: (scope: string, name: string) => journal(held, scope, name),
      /** The held journals of one scope (none when it has none). */
      ofScope: (scope: string): ReadonlyArray<HeldJournal> => held.journals.get(scope) ?? [],
      /** Every held journal (of `scope` only, when given), by scope. */
      all: (scope?: string): ReadonlyArray<HeldJournal> => byScope(held.journals.entries(), scope),
      /** The stored configurations that do not read back (of `scope` only, when given), by scope. */
      unreadable: (scope?: string): ReadonlyArray<UnreadableConfig> => byScope(held.unreadable.entries(), scope)
    } as const
  })

/** The configurations one process holds, as {@link makeHeldConfigurations} makes them. */
export type HeldConfigurations = Effect.Success<ReturnType<typeof makeHeldConfigurations>>
