import { Effect } from "effect"
import type { ConnectionError, InvalidInput, WrongType } from "@microdcs/store"
import type { ConditionLanguage, JournalConfig } from "./JournalConfig.js"
import type { JournalConfigStore, UnreadableConfig } from "./JournalConfigStore.js"
import { JournalNotFound, JournalUnreadable } from "./JournalErrors.js"
import type { CounterPredicates } from "./JournalStore.js"

/** A configured journal as held in memory: its configuration and its counters' compiled conditions. */
export interface HeldJournal {
  readonly config: JournalConfig
  readonly predicates: CounterPredicates
}

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

/**
 * The journal configurations one process holds, by scope, and the stored ones it could not read
 * (with their problems, so they are reported, never silently left out). Plain variables, each
 * replaced whole by `reload`: every record and recall reads them.
 */
export const makeHeldConfigurations = (store: JournalConfigStore, conditions: ConditionLanguage | undefined) => {
  let held: ReadonlyMap<string, ReadonlyArray<HeldJournal>> = new Map()
  let unreadable: ReadonlyMap<string, ReadonlyArray<UnreadableConfig>> = new Map()

  /** Reads the configurations of `scope` (every registered scope when absent) into memory. */
  const reload = (scope?: string): Effect.Effect<void, InvalidInput | WrongType | ConnectionError> =>
    Effect.gen(function* () {
      const scopes = scope === undefined ? yield* store.scopes : [scope]
      const read = yield* Effect.forEach(scopes, (s) => Effect.map(store.read(s, conditions), (r) => [s, r] as const))
      const nextHeld = new Map(scope === undefined ? [] : held)
      const nextUnreadable = new Map(scope === undefined ? [] : unreadable)
      for (const [s, r] of read) {
        if (r.configs.length === 0) nextHeld.delete(s)
        else nextHeld.set(s, r.configs.map((config) => ({ config, predicates: compile(config, conditions) })))
        if (r.unreadable.length === 0) nextUnreadable.delete(s)
        else nextUnreadable.set(s, r.unreadable)
      }
      held = nextHeld
      unreadable = nextUnreadable
    })

  /** One held journal; one stored but unreadable is `JournalUnreadable` with its problems. */
  const journal = (scope: string, name: string): Effect.Effect<HeldJournal, JournalNotFound | JournalUnreadable> => {
    const found = held.get(scope)?.find((j) => j.config.name === name)
    if (found !== undefined) return Effect.succeed(found)
    const broken = unreadable.get(scope)?.find((u) => u.journal === name)
    return broken === undefined ? Effect.fail(new JournalNotFound({ scope, journal: name })) : Effect.fail(new JournalUnreadable(broken))
  }

  return {
    reload,
    journal,
    /** The held journals of one scope (none when it has none). */
    ofScope: (scope: string): ReadonlyArray<HeldJournal> => held.get(scope) ?? [],
    /** Every held journal (of `scope` only, when given), by scope. */
    all: (scope?: string): ReadonlyArray<HeldJournal> => byScope(held.entries(), scope),
    /** The stored configurations that do not read back (of `scope` only, when given), by scope. */
    unreadable: (scope?: string): ReadonlyArray<UnreadableConfig> => byScope(unreadable.entries(), scope)
  } as const
}
