import { Effect, type Scope, Context, Layer } from "effect"
import { type ConnectionError, InvalidInput, Nudges, type StoreUnavailable, type WrongType } from "@microdcs/store"
import { JournalCache } from "./JournalCache.js"
import { JournalClock } from "./JournalClock.js"
import type { CounterConfig, JournalConfig } from "./JournalConfig.js"
import { JournalConfigStore, type UnreadableConfig } from "./JournalConfigStore.js"
import { type JournalConfigInvalid, JournalNotFound, type JournalNotLoaded, type JournalUnreadable } from "./JournalErrors.js"
import { JournalOptions } from "./JournalOptions.js"
import { type HeldJournal, makeHeldConfigurations } from "./HeldConfigurations.js"
import type { JournalDeps } from "./JournalDeps.js"
import { recall, type RecallOptions, warm } from "./JournalReads.js"
import { type InsertOutcome, type JournalEvent, type JournalFigures, JournalStore } from "./JournalStore.js"

export type { JournalReadError, RecallOptions, WarmSummary } from "./JournalReads.js"

export interface Recorded extends InsertOutcome {
  readonly scope: string
  readonly journal: string
}

export interface SweepSummary {
  readonly entriesRemoved: number
  readonly bytesRemoved: number
  readonly bucketsSubtracted: number
}

/** What a call that reads or writes Valkey may fail with. */
type StoreError = InvalidInput | WrongType | ConnectionError

/**
 * Keeps the configurations current for as long as the scope lives: reloads a scope when a
 * `nudge:journal` names it, and everything after a reconnect (nudges sent meanwhile are lost).
 * Returns once the first load is done; when it fails, `whenLoaded` fails too until a reload succeeds.
 */
const watch = ({ configs }: JournalDeps): Effect.Effect<void, InvalidInput | StoreUnavailable | WrongType | ConnectionError, Nudges | Scope.Scope> =>
  Effect.gen(function* () {
    const nudges = yield* Nudges
    const runtime = yield* Effect.context<never>()
    const run = (effect: Effect.Effect<void, unknown>) =>
      Effect.runForkWith(runtime)(effect.pipe(Effect.catch((e) => Effect.logWarning("journal configuration reload failed").pipe(Effect.annotateLogs({ error: String(e) })))))
    yield* nudges.listen("journal", "journal-config", { onNudge: (scope) => run(configs.reload(scope)), onReconnect: () => run(configs.reload()) })
    yield* configs.reload()
  }).pipe(Effect.tapError(configs.loadFailed))

const configOf = (deps: JournalDeps, scope: string, journal: string) => Effect.map(deps.configs.journal(scope, journal), (j) => j.config)

const list = (deps: JournalDeps, scope?: string): Effect.Effect<ReadonlyArray<JournalConfig>> => Effect.sync(() => deps.configs.all(scope).map((j) => j.config))

/**
 * The journals of `scope` as `record` sees them: `JournalNotLoaded` when the scope's
 * configurations have not been read (by a load of every scope or of this one), where `list`
 * would answer "none".
 */
const journalsOf = ({ configs }: JournalDeps, scope: string): Effect.Effect<ReadonlyArray<JournalConfig>, JournalNotLoaded> =>
  Effect.map(configs.loaded(scope), () => configs.ofScope(scope).map((j) => j.config))

/** Validates, stores and holds one journal's configuration (the JSON form); every problem listed on refusal. */
const configure = (deps: JournalDeps, scope: string, input: unknown): Effect.Effect<{ readonly config: JournalConfig; readonly created: boolean }, JournalConfigInvalid | StoreError> =>
  Effect.tap(deps.configStore.put(scope, input, deps.options.conditions), () => deps.configs.reload(scope))

const remove = (deps: JournalDeps, scope: string, journal: string): Effect.Effect<void, JournalNotFound | StoreError> =>
  Effect.tap(deps.configStore.remove(scope, journal), () => deps.configs.reload(scope))

const insert = (deps: JournalDeps, scope: string, journal: string, event: JournalEvent): Effect.Effect<InsertOutcome, JournalNotFound | JournalUnreadable | StoreError> =>
  Effect.flatMap(deps.configs.journal(scope, journal), (j) => deps.store.insert(j.config, event, deps.clock.now(), j.predicates))

/**
 * Journals one event in every journal whose types name its type: of `scope`, or of every
 * scope when none is given. What each journal did comes back (inserted or duplicate).
 * `JournalNotLoaded` when the configurations of `scope` (without one: of any scope) have not
 * been read yet: an empty answer would claim that no journal names the event.
 */
const record = (
  deps: JournalDeps,
  event: JournalEvent,
  where: { readonly scope?: string | undefined } = {}
): Effect.Effect<ReadonlyArray<Recorded>, JournalNotLoaded | StoreError> =>
  Effect.gen(function* () {
    const { configs, store } = deps
    yield* configs.loaded(where.scope)
    const now = deps.clock.now()
    const targets = configs.all(where.scope).filter((j) => j.config.types.includes(event.type))
    return yield* Effect.forEach(targets, (j) =>
      Effect.map(store.insert(j.config, event, now, j.predicates), (outcome) => ({ ...outcome, scope: j.config.scope, journal: j.config.name }))
    )
  })

const counterOf = (config: JournalConfig, counter: string): Effect.Effect<CounterConfig, JournalNotFound> => {
  const found = config.counters.find((c) => c.name === counter)
  return found ? Effect.succeed(found) : Effect.fail(new JournalNotFound({ scope: config.scope, journal: config.name, counter }))
}

/** A counter's total for one value over its window as of now (exact before the sweep ran). */
const counter = (deps: JournalDeps, scope: string, journal: string, counterName: string, value: string): Effect.Effect<number, JournalNotFound | JournalUnreadable | StoreError> =>
  Effect.gen(function* () {
    const config = yield* configOf(deps, scope, journal)
    return yield* deps.store.counterValue(config, yield* counterOf(config, counterName), value, deps.clock.now())
  })

/** What one `counterValues` call reads its counters from: the scope's journals as held when it started. */
interface CounterRead {
  readonly scope: string
  readonly journals: ReadonlyArray<HeldJournal>
  readonly values: Readonly<Record<string, string>>
  readonly now: number
}

/** One named counter for the value of its search key; none when that key has no value. */
const readCounter = (deps: JournalDeps, read: CounterRead, name: string): Effect.Effect<ReadonlyArray<readonly [string, number]>, JournalNotFound | StoreError> => {
  const owner = read.journals.find((j) => j.config.counters.some((c) => c.name === name))
  if (owner === undefined) return Effect.fail(new JournalNotFound({ scope: read.scope, journal: "*", counter: name }))
  const config = owner.config.counters.find((c) => c.name === name)!
  const value = read.values[config.searchKey]
  return value === undefined ? Effect.succeed([]) : Effect.map(deps.store.counterValue(owner.config, config, value, read.now), (total) => [[name, total] as const])
}

/**
 * The counters a recipe transition names (`counter.nok_torque_1h`), for the runtime to read
 * before it calls the pure core: counter names are unique in a scope, and `values` gives the
 * value of each search key (from the step's results or the job order). A counter whose search
 * key has no value is left out; an unknown name is `JournalNotFound`, and a scope whose
 * configurations have not been read yet is `JournalNotLoaded`.
 */
const counterValues = (
  deps: JournalDeps,
  scope: string,
  names: ReadonlyArray<string>,
  values: Readonly<Record<string, string>>
): Effect.Effect<Readonly<Record<string, number>>, JournalNotFound | JournalNotLoaded | StoreError> =>
  Effect.gen(function* () {
    // Not read yet is not "no such counter": a transition must not decide on a counter it could not see.
    yield* deps.configs.loaded(scope)
    const read: CounterRead = { scope, journals: deps.configs.ofScope(scope), values, now: deps.clock.now() }
    const totals = yield* Effect.forEach(names, (name) => readCounter(deps, read, name), { concurrency: "unbounded" })
    return Object.fromEntries(totals.flat())
  })

type SweepOptions = { readonly scope?: string | undefined; readonly batch?: number | undefined }

/** Entries past retention of each journal, batch after batch until none is due. */
const sweepEntries = (deps: JournalDeps, journals: ReadonlyArray<JournalConfig>, now: number, batch: number) =>
  Effect.gen(function* () {
    let entriesRemoved = 0
    let bytesRemoved = 0
    for (const config of journals) {
      for (;;) {
        const step = yield* deps.store.expireEntries(config, now, batch)
        entriesRemoved += step.removed
        bytesRemoved += step.bytes
        if (step.removed === 0 || step.due < batch) break
      }
    }
    return { entriesRemoved, bytesRemoved }
  })

/** The counter buckets of each scope that left their windows, batch after batch until none is due. */
const sweepBuckets = (deps: JournalDeps, scopes: Iterable<string>, now: number, batch: number) =>
  Effect.gen(function* () {
    let bucketsSubtracted = 0
    for (const scope of scopes) {
      for (;;) {
        const step = yield* deps.store.expireBuckets(scope, now, batch)
        bucketsSubtracted += step.subtracted
        if (step.subtracted === 0 || step.due < batch) break
      }
    }
    return bucketsSubtracted
  })

/**
 * One sweep: entries past retention of every held journal (of `scope`, when given), and
 * the counter buckets that left their windows, in batches (one script each) until none is due.
 */
const sweep = (deps: JournalDeps, sweepOptions: SweepOptions = {}): Effect.Effect<SweepSummary, StoreError> =>
  Effect.gen(function* () {
    const now = deps.clock.now()
    const journals = yield* list(deps, sweepOptions.scope)
    const { entriesRemoved, bytesRemoved } = yield* sweepEntries(deps, journals, now, sweepOptions.batch ?? 100)
    const bucketsSubtracted = yield* sweepBuckets(deps, new Set(journals.map((j) => j.scope)), now, sweepOptions.batch ?? 200)
    return { entriesRemoved, bytesRemoved, bucketsSubtracted }
  })

/**
 * The journal of an island: configurations held in memory (reloaded when a
 * `nudge:journal` names their scope, see `watch`), `record` for the event path, recall through a
 * byte-bounded local cache warmed from the LRU journals, counters over their windows, and the
 * expiry sweep.
 */
export class Journal extends Context.Service<Journal>()("@microdcs/journal/Journal", {
  make: Effect.gen(function* () {
    const store = yield* JournalStore
    const configStore = yield* JournalConfigStore
    const options = yield* JournalOptions
    const clock = yield* JournalClock
    const cache = new JournalCache(options.cacheBytes)
    const configs = yield* makeHeldConfigurations(configStore, options.conditions)
    const deps: JournalDeps = { store, configStore, options, clock, cache, configs }
    return {
      reload: configs.reload,
      watch: watch(deps),
      list: (scope?: string) => list(deps, scope),
      journalsOf: (scope: string) => journalsOf(deps, scope),
      config: (scope: string, journal: string) => configOf(deps, scope, journal),
      /** The stored configurations this process could not read (of `scope`, when given), with their problems. */
      unreadable: (scope?: string): Effect.Effect<ReadonlyArray<UnreadableConfig>> => Effect.sync(() => configs.unreadable(scope)),
      whenLoaded: configs.whenLoaded,
      configure: (scope: string, input: unknown) => configure(deps, scope, input),
      remove: (scope: string, journal: string) => remove(deps, scope, journal),
      insert: (scope: string, journal: string, event: JournalEvent) => insert(deps, scope, journal, event),
      record: (event: JournalEvent, where?: { readonly scope?: string | undefined }) => record(deps, event, where),
      recall: (scope: string, journal: string, searchKey: string, value: string, recallOptions?: RecallOptions) =>
        recall(deps, { scope, journal, searchKey, value }, recallOptions),
      counter: (scope: string, journal: string, counterName: string, value: string) => counter(deps, scope, journal, counterName, value),
      counterValues: (scope: string, names: ReadonlyArray<string>, values: Readonly<Record<string, string>>) => counterValues(deps, scope, names, values),
      sweep: (sweepOptions?: SweepOptions) => sweep(deps, sweepOptions),
      warm: warm(deps),
      figures: (scope: string): Effect.Effect<ReadonlyArray<JournalFigures>, StoreError> => store.figures(scope),
      cache: { get bytes() { return cache.bytes }, get entries() { return cache.entries }, maxBytes: cache.maxBytes }
    } as const
  }),
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies.pipe(Layer.provide([JournalStore.Default, JournalConfigStore.Default]))
}
