import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { until } from "@microdcs/test-utils"
import { Nudges } from "@microdcs/store"
import { handleJournalConfigEvent, Journal, JOURNAL_CONFIG_EVENT_TYPE, parseJournalConfig } from "@microdcs/journal"
import { journalLayer, movableClock, randomPrefix, keyDump, raw, torqueConfig } from "./JournalKit.js"

// Issue 12, item 2: configuration per scope, validated with every problem listed, from the config
// CloudEvent (PUT/DELETE) or an operator; held in memory and reloaded on change.

const prefix = randomPrefix("jconfig")
const { layer: clockLayer } = movableClock()
const layer = journalLayer(prefix, clockLayer)

const bad = {
  name: "9torque",
  types: [],
  searchKeys: [{ name: "tool", path: "data..tool" }, { name: "tool", path: "x" }, { path: "y" }],
  retention: { maxAge: "forever", reference: "sometime" },
  compression: "zstd",
  counters: [
    { name: "c1", searchKey: "nope", window: "1h", resolution: "week" },
    { name: "c2", searchKey: "tool", window: "30s", resolution: "minute", when: "x > 1" },
    { name: "c2", searchKey: "tool", window: "1h", sum: "" }
  ],
  colour: "red"
}

describe("journal configuration", () => {
  it("lists every problem of a bad configuration", () => {
    const parsed = parseJournalConfig("s1", bad)
    expect("problems" in parsed && parsed.problems).toEqual([
      "journal.colour is not a known field",
      "name '9torque' must start with a letter and hold only letters, digits, '_', '.', '-' (at most 64)",
      "types must be a non-empty list of CloudEvent types",
      "searchKeys[0].path 'data..tool' has an empty segment",
      "searchKeys[1].name 'tool' is used twice",
      "searchKeys[2].name must be a text",
      "retention.maxAge must be a duration such as 90m, 12h or 7d, got \"forever\"",
      "retention.reference must be event or arrival, got \"sometime\"",
      "compression must be none or lz4, got \"zstd\"",
      "counters[0].searchKey must name one of the journal's search keys (tool), got \"nope\"",
      "counters[0].resolution must be minute, hour or day, got \"week\"",
      "counters[1].window 30s is shorter than its resolution (minute)",
      "counters[1].when: no condition language is configured in this process",
      "counters[2].name 'c2' is used twice",
      "counters[2].sum must be a non-empty path such as data.tool_id"
    ])
    // With a condition language, `when` is compiled at validation.
    const conditions = { compile: (text: string) => (text === "ok" ? { predicate: () => true } : { problem: `cannot read '${text}'` }) }
    const withWhen = { ...torqueConfig, counters: [{ name: "nok", searchKey: "tool", window: "1h", when: "bad" }] }
    expect(parseJournalConfig("s1", withWhen, conditions)).toEqual({ problems: ["counters[0].when: cannot read 'bad'"] })
  })

  it.live("a bad configuration is refused with every problem and nothing is stored; a good one is held and reloaded", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      const before = yield* keyDump(prefix)
      const refused = yield* Effect.flip(journal.configure("s1", bad))
      expect(refused).toMatchObject({ _tag: "JournalConfigInvalid", scope: "s1", journal: "9torque" })
      expect(refused._tag === "JournalConfigInvalid" && refused.problems).toHaveLength(15)
      expect(yield* Effect.flip(journal.configure("", torqueConfig))).toMatchObject({ _tag: "JournalConfigInvalid" })
      expect(yield* keyDump(prefix)).toEqual(before)

      expect(yield* journal.configure("s1", torqueConfig)).toMatchObject({ created: true, config: { name: "torque", retentionMs: 86_400_000, compression: "lz4" } })
      expect((yield* journal.list("s1")).map((c) => c.name)).toEqual(["torque"])
      // Counter names belong to the scope: another journal may not reuse one.
      const clash = yield* Effect.flip(journal.configure("s1", { ...torqueConfig, name: "torque2" }))
      expect(clash).toMatchObject({ _tag: "JournalConfigInvalid", journal: "torque2" })
      expect(clash._tag === "JournalConfigInvalid" && clash.problems[0]).toMatch(/already a counter of journal 'torque'/)

      // Another process holds the configuration in memory and follows changes through the nudge.
      const watcherLayer = Layer.merge(journalLayer(prefix, clockLayer), Nudges.Default.pipe(Layer.provide(journalLayer(prefix, clockLayer))))
      yield* Effect.scoped(
        Effect.gen(function* () {
          const other = yield* Journal
          yield* other.watch
          expect((yield* other.list("s1")).map((c) => c.name)).toEqual(["torque"])
          const put = yield* handleJournalConfigEvent({
            type: JOURNAL_CONFIG_EVENT_TYPE,
            subject: "s1",
            data: { name: "qa", types: ["com.example.station.qa.v1"], searchKeys: [{ name: "job", path: "jobid" }], retention: { maxAge: "7d" } }
          }).pipe(Effect.provideService(Journal, journal))
          expect(put).toMatchObject({ _tag: "JournalConfigured", created: true })
          yield* until(other.list("s1"), (configs) => configs.length === 2, { what: "the watcher holds the new journal" })
          const removed = yield* handleJournalConfigEvent({ type: JOURNAL_CONFIG_EVENT_TYPE, subject: "s1", extensions: { method: "DELETE" }, data: { name: "qa" } }).pipe(
            Effect.provideService(Journal, journal)
          )
          expect(removed).toEqual({ _tag: "JournalRemoved", scope: "s1", journal: "qa" })
          yield* until(other.list("s1"), (configs) => configs.length === 1, { what: "the watcher dropped the journal" })
        }).pipe(Effect.provide(watcherLayer))
      )

      const refusedEvent = yield* Effect.flip(
        handleJournalConfigEvent({ type: JOURNAL_CONFIG_EVENT_TYPE, subject: "", extensions: { method: "PATCH" } }).pipe(Effect.provideService(Journal, journal))
      )
      expect(refusedEvent).toMatchObject({ _tag: "JournalConfigInvalid", problems: ["subject must name the scope", "method must be PUT or DELETE, got 'PATCH'"] })
      expect(yield* Effect.flip(journal.remove("s1", "qa"))).toMatchObject({ _tag: "JournalNotFound" })
    }).pipe(Effect.provide(layer))
  )

  // A stored journal whose `when` only reads with the process's language must still count.
  const fieldEquals = {
    compile: (text: string) => {
      const match = /^(\w+) == (\w+)$/.exec(text)
      if (!match) return { problem: `cannot read '${text}'` }
      return { predicate: (event: unknown) => (event as { data?: Record<string, unknown> }).data?.[match[1]!] === match[2] }
    }
  }

  it.live("a counter name is refused when a journal with a `when` counter of that name is stored", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      const withWhen = { ...torqueConfig, counters: [{ name: "nok_1h", searchKey: "tool", window: "1h", resolution: "minute", when: "result == NOK" }] }
      yield* journal.configure("s-when", withWhen)
      const before = yield* keyDump(prefix)
      const clash = yield* Effect.flip(journal.configure("s-when", { ...withWhen, name: "torque-copy" }))
      expect(clash._tag === "JournalConfigInvalid" && clash.problems[0]).toMatch(/'nok_1h' is already a counter of journal 'torque'/)
      expect(yield* keyDump(prefix)).toEqual(before)
    }).pipe(Effect.provide(journalLayer(prefix, clockLayer, { conditions: fieldEquals })))
  )

  it.live("a stored configuration that does not read back is reported with its problems, and its reads say so", () =>
    Effect.gen(function* () {
      const journal = yield* Journal
      const withWhen = { ...torqueConfig, name: "when-torque", counters: [{ name: "nok_w", searchKey: "tool", window: "1h", resolution: "minute", when: "result == NOK" }] }
      // Stored by a process with the condition language; read back by one without it (this layer).
      yield* journal.configure("s-read", torqueConfig)
      yield* raw((c) => c.hset(`${prefix}:journal:config:s-read`, "when-torque", JSON.stringify(withWhen)))
      yield* journal.reload()
      expect((yield* journal.list("s-read")).map((c) => c.name)).toEqual(["torque"])
      expect(yield* journal.unreadable("s-read")).toEqual([
        { scope: "s-read", journal: "when-torque", problems: ["counters[0].when: no condition language is configured in this process"] }
      ])
      const read = yield* Effect.flip(journal.config("s-read", "when-torque"))
      expect(read).toMatchObject({ _tag: "JournalUnreadable", scope: "s-read", journal: "when-torque" })
      expect(read.message).toBe("journal 'when-torque' of scope 's-read' is stored but cannot be read: counters[0].when: no condition language is configured in this process")
      expect((yield* Effect.flip(journal.config("s-read", "nothing")))._tag).toBe("JournalNotFound")
      // Configured again, readable: no longer reported.
      yield* raw((c) => c.hdel(`${prefix}:journal:config:s-read`, "when-torque"))
      yield* journal.reload("s-read")
      expect(yield* journal.unreadable("s-read")).toEqual([])
    }).pipe(Effect.provide(layer))
  )
})
