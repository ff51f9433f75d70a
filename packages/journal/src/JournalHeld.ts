import { Deferred, Effect, Ref } from "effect"
import type { ConnectionError, InvalidInput, WrongType } from "@microdcs/store"
import type { ConditionLanguage, JournalConfig } from "./JournalConfig.js"
import type { JournalConfigStore, UnreadableConfig } from "./JournalConfigStore.js"
import { JournalNotLoaded } from "./JournalErrors.js"
import type { CounterPredicates } from "./JournalStore.js"

/** A configured journal as held in memory: its configuration and its counters' compiled conditions. */
export interface HeldJournal {
  readonly config: JournalConfig
  readonly predicates: CounterPredicates
}

export type HeldJournals = ReadonlyMap<string, ReadonlyArray<HeldJournal>>

type LoadState = { readonly _tag: "Pending" } | { readonly _tag: "Loaded" } | { readonly _tag: "Failed"; readonly reason: string }

const compile = (config: JournalConfig, conditions: ConditionLanguage | undefined): CounterPredicates => {
  const predicates = new Map<string, (event: unknown) => boolean>()
  for (const counter of config.counters) {
    if (counter.when === undefined || conditions === undefined) continue
    const compiled = conditions.compile(counter.when)
    if ("predicate" in compiled) predicates.set(counter.name, compiled.predicate)
  }
  return predicates
}

const reasonOf = (error: { readonly _tag: string; readonly message: string }) => `${error._tag}: ${error.message}`

/**
 * The journal configurations a process holds in memory, and whether they have been read.
 * Until they are, "no journal here" cannot be told from "not read yet": a record then fails
 * with `JournalNotLoaded` instead of journaling nothing without a word. Reloads run one at a
 * time, so what is held is always what the latest reload read, never an older read that
 * finished later.
 */
export const makeHeldJournals = (configStore: JournalConfigStore, conditions: ConditionLanguage | undefined) =>
  Effect.gen(function* () {
    // Read on every record: a plain variable, replaced whole by `reload`.
    let held: HeldJournals = new Map()
    // The scopes read so far; "all" once a reload of every scope succeeded.
    let read: "all" | ReadonlySet<string> = new Set()
    let state: LoadState = { _tag: "Pending" }
    // Completed by the first load of every scope, whether it succeeded or failed.
    const settled = yield* Deferred.make<void>()
    const unreadable = yield* Ref.make<ReadonlyMap<string, ReadonlyArray<UnreadableConfig>>>(new Map())
    const oneAtATime = yield* Effect.makeSemaphore(1)

    const apply = (scope: string | undefined, results: ReadonlyArray<readonly [string, { readonly configs: ReadonlyArray<JournalConfig>; readonly unreadable: ReadonlyArray<UnreadableConfig> }]>) =>
      Effect.gen(function* () {
        const next = new Map(scope === undefined ? [] : held)
        for (const [s, r] of results) {
          if (r.configs.length === 0) next.delete(s)
          else next.set(s, r.configs.map((config) => ({ config, predicates: compile(config, conditions) })))
        }
        held = next
        read = scope === undefined ? "all" : read === "all" ? read : new Set([...read, scope])
        yield* Ref.update(unreadable, (current) => {
          const kept = new Map(scope === undefined ? [] : current)
          for (const [s, r] of results) kept.set(s, r.unreadable)
          return kept
        })
      })

    const settle = (next: LoadState) =>
      Effect.suspend(() => {
        state = next
        return Deferred.succeed(settled, undefined)
      })

    /** Reads the configurations of `scope` (every registered scope when absent) into memory. */
    const reload = (scope?: string): Effect.Effect<void, InvalidInput | WrongType | ConnectionError> =>
      oneAtATime.withPermits(1)(
        Effect.gen(function* () {
          const scopes = scope === undefined ? yield* configStore.scopes : [scope]
          const results = yield* Effect.forEach(scopes, (s) => Effect.map(configStore.read(s, conditions), (r) => [s, r] as const))
          yield* apply(scope, results)
        })
      ).pipe(
        Effect.tapBoth({
          onSuccess: () => (scope === undefined ? settle({ _tag: "Loaded" }) : Effect.void),
          onFailure: (error) => (scope === undefined ? loadFailed(error) : Effect.void)
        })
      )

    /**
     * The load of every scope failed (or what would run it did): recorded unless a load already
     * succeeded, whose configurations are still the best known.
     */
    const loadFailed = (error: { readonly _tag: string; readonly message: string }) =>
      Effect.suspend(() => (state._tag === "Loaded" ? Effect.void : settle({ _tag: "Failed", reason: reasonOf(error) })))

    /**
     * Waits until the configurations of every scope have been read once; fails with
     * `JournalNotLoaded` while that read has failed and no later one succeeded.
     */
    const whenLoaded: Effect.Effect<void, JournalNotLoaded> = Effect.suspend(() => {
      if (state._tag === "Loaded") return Effect.void
      if (state._tag === "Failed") return Effect.fail(new JournalNotLoaded({ scope: undefined, reason: state.reason }))
      return Effect.zipRight(Deferred.await(settled), Effect.suspend(() => whenLoaded))
    })

    /** The held journals a record in `scope` (every scope when absent) consults, or why there are none to consult. */
    const forRecord = (scope: string | undefined): Effect.Effect<HeldJournals, JournalNotLoaded> => {
      const known = read === "all" || (scope === undefined ? read.size > 0 : read.has(scope))
      if (known) return Effect.succeed(held)
      const reason = state._tag === "Failed" ? state.reason : "not read yet"
      return Effect.fail(new JournalNotLoaded({ scope, reason }))
    }

    return { current: () => held, reload, loadFailed, whenLoaded, forRecord, unreadable: Ref.get(unreadable) } as const
  })
