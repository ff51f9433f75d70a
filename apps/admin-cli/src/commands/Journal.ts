import { Argument, Command, Flag } from "effect/cli"
import { Effect, Layer, Option } from "effect"
import {
  formatDuration,
  Journal,
  type JournalConfig,
  journalConfigJson,
  journalIndexedFamily,
  JournalOptions,
  journalSummary,
  type UnreadableConfig
} from "@microdcs/journal"
import { eventConditions } from "@microdcs/sfc"
import { type Inconsistency, IndexMaintenance, IndexRegistry } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { ProblemsFound, UsageError } from "../ExitCode.js"
import { island } from "../Island.js"
import { prettyJson } from "../Json.js"
import { readJsonFile } from "../JsonFile.js"
import { emit } from "../Output.js"
import { renderFields, renderTable, section, sections } from "../Table.js"
import { yesOption } from "../Yes.js"
import { journalExit } from "./JournalErrors.js"

/**
 * `journal list|show|recall|counter|check|rebuild|configure|remove`: the event
 * journal and its counters. The configurations are read from the island when the command starts,
 * with the daemon's condition language for counters' `when` (without it a configuration with a
 * `when` would not read back); the local cache is off (a one-shot process has nothing to warm).
 */
const withJournal = <A, E, R>(body: (journal: Journal["Service"]) => Effect.Effect<A, E, R>) =>
  island(
    journalExit(
      Effect.gen(function* () {
        const journal = yield* Journal
        yield* journal.reload()
        return yield* body(journal)
      }).pipe(Effect.provide(Journal.Default.pipe(Layer.provide(JournalOptions.layer({ cacheBytes: 0, conditions: eventConditions })))))
    )
  )

const renderUnreadable = (unreadable: ReadonlyArray<UnreadableConfig>) =>
  renderTable(
    [
      { header: "SCOPE", value: (u: UnreadableConfig) => u.scope },
      { header: "JOURNAL", value: (u) => u.journal },
      { header: "PROBLEMS", value: (u) => u.problems.join("; ") }
    ],
    unreadable
  )

const scopeOption = Flag.String("scope").pipe(Flag.withDescription("the scope"))
const journalOption = Flag.String("journal").pipe(Flag.withAlias("j"), Flag.withDescription("the journal's name"))

const describeCounter = (c: JournalConfig["counters"][number]) =>
  `${c.sum === undefined ? "count" : `sum ${c.sum}`} by ${c.searchKey} over ${formatDuration(c.windowMs)} (${c.resolution} buckets)${c.when === undefined ? "" : ` when ${c.when}`}`

const list = Command.make("list", { scope: scopeOption.pipe(Flag.optional) }, ({ scope }) =>
  withJournal((journal) =>
    Effect.gen(function* () {
      const configs = yield* journal.list(Option.getOrUndefined(scope))
      const unreadable = yield* journal.unreadable(Option.getOrUndefined(scope))
      const figures = new Map<string, { entries: number; bytes: number }>()
      for (const s of new Set(configs.map((c) => c.scope))) {
        for (const f of yield* journal.figures(s)) figures.set(`${s}\u0000${f.journal}`, f)
      }
      const rows = configs.map((c) => journalSummary(c, figures.get(`${c.scope}\u0000${c.name}`)))
      yield* emit({ journals: rows, unreadable }, () =>
        sections(
          renderTable(
            [
              { header: "SCOPE", value: (r: (typeof rows)[number]) => r.scope },
              { header: "JOURNAL", value: (r) => r.journal },
              { header: "SEARCH KEYS", value: (r) => r.searchKeys.join(",") },
              { header: "COUNTERS", value: (r) => r.counters.join(",") || "-" },
              { header: "RETENTION", value: (r) => r.retention },
              { header: "ENTRIES", value: (r) => r.entries, align: "right" },
              { header: "BYTES", value: (r) => r.bytes, align: "right" }
            ],
            rows,
            unreadable.length > 0 ? "(no readable journals)" : "(no journals configured)"
          ),
          ...(unreadable.length > 0 ? [section("Stored but not readable (nothing is journaled into them)", renderUnreadable(unreadable))] : [])
        )
      )
      if (unreadable.length > 0) {
        return yield* new ProblemsFound({ message: `${unreadable.length} stored journal configuration(s) cannot be read; configure them again` })
      }
    })
  )
).pipe(Command.withDescription("the configured journals with their entry counts and bytes; stored ones that cannot be read are listed with why (exit 1)"))

const show = Command.make("show", { scope: scopeOption, journal: journalOption }, ({ scope, journal: name }) =>
  withJournal((journal) =>
    Effect.gen(function* () {
      const config = yield* journal.config(scope, name)
      const figures = (yield* journal.figures(scope)).find((f) => f.journal === name) ?? { entries: 0, bytes: 0 }
      yield* emit({ scope, ...journalConfigJson(config), entries: figures.entries, bytes: figures.bytes }, () =>
        sections(
          renderFields([
            ["scope", scope],
            ["journal", name],
            ["types", config.types.join(", ")],
            ["retention", `${formatDuration(config.retentionMs)} by ${config.reference === "event" ? "event time" : "arrival"}`],
            ["compression", config.compression],
            ["entries", figures.entries],
            ["bytes", figures.bytes]
          ]),
          section("Search keys", renderTable([{ header: "NAME", value: (k: JournalConfig["searchKeys"][number]) => k.name }, { header: "PATH", value: (k) => k.path }], config.searchKeys)),
          section("Counters", renderTable([{ header: "NAME", value: (c: JournalConfig["counters"][number]) => c.name }, { header: "WHAT", value: describeCounter }], config.counters))
        )
      )
    })
  )
).pipe(Command.withDescription("one journal's configuration and figures"))

const keyOption = Flag.String("key").pipe(Flag.withDescription("the search key (its name in the journal's configuration)"))
const valueOption = Flag.String("value").pipe(Flag.withDescription("the search key's value"))

const parseSince = (since: Option.Option<string>): Effect.Effect<number | undefined, UsageError> =>
  Option.match(since, {
    onNone: () => Effect.succeed(undefined),
    onSome: (text) => {
      const time = /^\d+$/.test(text) ? Number(text) : Date.parse(text)
      return Number.isFinite(time) ? Effect.succeed(time) : Effect.fail(new UsageError({ message: `--since must be an ISO time or epoch ms, got '${text}'` }))
    }
  })

const recall = Command.make(
  "recall",
  {
    scope: scopeOption,
    journal: journalOption,
    key: keyOption,
    value: valueOption,
    limit: Flag.Int("limit").pipe(Flag.withDefault(20), Flag.withDescription("at most this many entries, newest first")),
    since: Flag.String("since").pipe(Flag.optional, Flag.withDescription("only entries at or after this time (ISO or epoch ms)"))
  },
  ({ scope, journal: name, key, value, limit, since }) =>
    withJournal((journal) =>
      Effect.gen(function* () {
        const entries = yield* journal.recall(scope, name, key, value, { limit, since: yield* parseSince(since) })
        const rows = entries.map((e) => ({ id: e.id, time: new Date(e.time).toISOString(), event: e.event }))
        yield* emit({ scope, journal: name, key, value, entries: rows }, () =>
          renderTable(
            [
              { header: "TIME", value: (r: (typeof rows)[number]) => r.time },
              { header: "TYPE", value: (r) => String((r.event as { type?: unknown }).type ?? "") },
              { header: "EVENT ID", value: (r) => String((r.event as { id?: unknown }).id ?? "") },
              { header: "DATA", value: (r) => JSON.stringify((r.event as { data?: unknown }).data ?? null) }
            ],
            rows,
            `(no entries for ${key}=${value})`
          )
        )
      })
    )
).pipe(Command.withDescription("the newest entries of one search-key value (stamps the value as recently used)"))

const counter = Command.make(
  "counter",
  { scope: scopeOption, journal: journalOption, counter: Flag.String("counter").pipe(Flag.withDescription("the counter's name")), value: valueOption },
  ({ scope, journal: name, counter: counterName, value }) =>
    withJournal((journal) =>
      Effect.gen(function* () {
        const config = yield* journal.config(scope, name)
        const total = yield* journal.counter(scope, name, counterName, value)
        const spec = config.counters.find((c) => c.name === counterName)!
        yield* emit({ scope, journal: name, counter: counterName, value, total, window: spec.windowMs, resolution: spec.resolution }, () =>
          renderFields([
            ["counter", counterName],
            ["what", describeCounter(spec)],
            [spec.searchKey, value],
            ["total", total]
          ])
        )
      })
    )
).pipe(Command.withDescription("a counter's total for one value over its window, as of now"))

/** Index maintenance over the journal's family alone. */
const withJournalMaintenance = <A, E, R>(body: (maintenance: IndexMaintenance["Service"]) => Effect.Effect<A, E, R>) =>
  island(
    Effect.flatMap(
      Effect.provide(IndexMaintenance, IndexMaintenance.Default.pipe(Layer.provide(Layer.succeed(IndexRegistry, IndexRegistry.of({ families: [journalIndexedFamily] }))))),
      body
    )
  )

const renderInconsistencies = (found: ReadonlyArray<Inconsistency>) =>
  renderTable(
    [
      { header: "KIND", value: (i: Inconsistency) => i.kind },
      { header: "KEY", value: (i) => i.key },
      { header: "MEMBER", value: (i) => i.member },
      { header: "EXPECTED", value: (i) => String(i.expected) },
      { header: "FOUND", value: (i) => String(i.found) }
    ],
    found,
    "no inconsistencies"
  )

const optionalScope = Flag.String("scope").pipe(Flag.withDescription("only this scope; default every scope"), Flag.optional)

const check = Command.make("check", { scope: optionalScope }, ({ scope }) =>
  withJournalMaintenance((maintenance) =>
    Effect.gen(function* () {
      const found = yield* maintenance.check({ scope: Option.getOrUndefined(scope) })
      yield* emit({ scope: Option.getOrNull(scope), consistent: found.length === 0, inconsistencies: found }, () => renderInconsistencies(found))
      if (found.length > 0) return yield* new ProblemsFound({ message: `${found.length} journal inconsistenc${found.length === 1 ? "y" : "ies"} found; run 'journal rebuild'` })
    })
  )
).pipe(Command.withDescription("counter totals against their buckets, entry counts and index entries against the payloads (read only; exit 1 when inconsistent)"))

const rebuild = Command.make("rebuild", { scope: optionalScope, yes: yesOption }, ({ scope, yes }) =>
  withJournalMaintenance((maintenance) =>
    Effect.gen(function* () {
      yield* confirmDestructive(yes, `Recompute the journal counter totals and entry counts of ${Option.match(scope, { onNone: () => "every scope", onSome: (s) => `scope ${s}` })}?`)
      const summary = yield* maintenance.rebuild({ scope: Option.getOrUndefined(scope) })
      yield* emit({ scope: Option.getOrNull(scope), ...summary }, () =>
        sections(
          renderFields([["scanned", summary.scanned], ["repaired", summary.repaired], ["unrepaired", summary.unrepaired.length]]),
          ...(summary.unrepaired.length > 0 ? [section("Left for an operator", renderInconsistencies(summary.unrepaired))] : [])
        )
      )
      if (summary.unrepaired.length > 0) return yield* new ProblemsFound({ message: `${summary.unrepaired.length} left unrepaired` })
    })
  )
).pipe(Command.withDescription("recompute counter totals and entry counts, drop index entries without payload (safe while live)"))

const configure = Command.make(
  "configure",
  { scope: scopeOption, file: Argument.File("file", { mustExist: true }).pipe(Argument.withDescription("a journal configuration as JSON")) },
  ({ scope, file }) =>
    withJournal((journal) =>
      Effect.gen(function* () {
        const { parsed: input } = yield* readJsonFile(file)
        const { config, created } = yield* journal.configure(scope, input)
        yield* emit({ scope, created, config: journalConfigJson(config) }, () =>
          sections(`${created ? "created" : "replaced"} journal ${config.name} in scope ${scope}`, prettyJson(journalConfigJson(config)))
        )
      })
    )
).pipe(Command.withDescription("validate and store a journal's configuration (every problem listed; nothing stored on any)"))

const remove = Command.make("remove", { scope: scopeOption, journal: journalOption, yes: yesOption }, ({ scope, journal: name, yes }) =>
  withJournal((journal) =>
    Effect.gen(function* () {
      yield* confirmDestructive(yes, `Remove the configuration of journal ${name} in scope ${scope}? Nothing records into it afterwards.`)
      yield* journal.remove(scope, name)
      yield* emit({ scope, journal: name, removed: true }, () => `removed journal ${name} of scope ${scope}`)
    })
  )
).pipe(Command.withDescription("remove a journal's configuration (its entries stay until removed by hand)"))

export const journalCommand = Command.make("journal").pipe(
  Command.withDescription("the event journal and its rolling counters"),
  Command.withSubcommands([list, show, recall, counter, check, rebuild, configure, remove])
)
