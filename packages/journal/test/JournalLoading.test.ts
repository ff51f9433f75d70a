import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { Nudges } from "@microdcs/store"
import { Journal } from "@microdcs/journal"
import { journalLayer, movableClock, randomPrefix, raw, torqueConfig, torqueEvent } from "./JournalKit.js"

// Issue 21, item 1: before a process has read its journal configurations, "no journal names this
// event" cannot be told from "not read yet"; a record must say so instead of journaling nothing.

const { clock, layer: clockLayer } = movableClock()

/** A fresh prefix with the torque journal stored in `scope`, and a process (a Journal) that has not read it yet. */
const storedElsewhere = (scope: string) =>
  Effect.gen(function* () {
    const prefix = randomPrefix("jload")
    yield* Effect.flatMap(Journal, (other) => other.configure(scope, torqueConfig)).pipe(Effect.provide(journalLayer(prefix, clockLayer)))
    return prefix
  })

describe("journal configurations not loaded yet", () => {
  it.live("record, journalsOf and a counter read fail with JournalNotLoaded until the configurations are read; list says none", () =>
    Effect.gen(function* () {
      const prefix = yield* storedElsewhere("s1")
      yield* Effect.gen(function* () {
        const journal = yield* Journal
        const event = torqueEvent(clock.now, { tool: "nr-1" })
        expect(yield* Effect.flip(journal.record(event, { scope: "s1" }))).toMatchObject({ _tag: "JournalNotLoaded", scope: "s1" })
        expect(yield* Effect.flip(journal.record(event))).toMatchObject({ _tag: "JournalNotLoaded", scope: undefined })
        expect(yield* Effect.flip(journal.journalsOf("s1"))).toMatchObject({ _tag: "JournalNotLoaded" })
        expect(yield* Effect.flip(journal.counterValues("s1", ["torque_1h"], { tool: "nr-1" }))).toMatchObject({ _tag: "JournalNotLoaded" })
        expect(yield* journal.list("s1")).toEqual([])

        yield* journal.reload()
        expect((yield* journal.record(event, { scope: "s1" })).map((r) => r.status)).toEqual(["inserted"])
        expect((yield* journal.journalsOf("s1")).map((c) => c.name)).toEqual(["torque"])
        // A scope without journals, read with the rest: an empty answer now means "none".
        expect(yield* journal.journalsOf("s2")).toEqual([])
        expect(yield* journal.record(event, { scope: "s2" })).toEqual([])
      }).pipe(Effect.provide(journalLayer(prefix, clockLayer)))
    })
  )

  it.live("a reload of one scope makes that scope's records answer, not the others'", () =>
    Effect.gen(function* () {
      const prefix = yield* storedElsewhere("s1")
      yield* Effect.gen(function* () {
        const journal = yield* Journal
        yield* journal.reload("s1")
        expect((yield* journal.record(torqueEvent(clock.now), { scope: "s1" })).map((r) => r.journal)).toEqual(["torque"])
        expect(yield* Effect.flip(journal.record(torqueEvent(clock.now), { scope: "s2" }))).toMatchObject({ _tag: "JournalNotLoaded", scope: "s2" })
      }).pipe(Effect.provide(journalLayer(prefix, clockLayer)))
    })
  )

  it.live("whenLoaded waits for the watch's first load; a failed load fails it (and the records) until a reload succeeds", () =>
    Effect.gen(function* () {
      const prefix = yield* storedElsewhere("s1")
      const layer = journalLayer(prefix, clockLayer)
      const watching = Layer.merge(layer, Nudges.Default.pipe(Layer.provide(layer)))
      yield* Effect.scoped(
        Effect.gen(function* () {
          const journal = yield* Journal
          const waiting = yield* Effect.forkChild(journal.whenLoaded)
          yield* Effect.sleep("50 millis")
          expect(waiting.pollUnsafe()).toBeUndefined() // still waiting (v3: unsafePoll() was null)
          yield* journal.watch
          yield* Fiber.join(waiting)
          expect((yield* journal.journalsOf("s1")).map((c) => c.name)).toEqual(["torque"])
        }).pipe(Effect.provide(watching))
      )

      // The registry of scopes holds another type: the load fails, and says why.
      const scopesKey = `${prefix}:journal:scopes`
      const members = yield* raw((c) => c.smembers(scopesKey)).pipe(Effect.provide(layer))
      yield* raw((c) => c.del(scopesKey).then(() => c.set(scopesKey, "not a set"))).pipe(Effect.provide(layer))
      yield* Effect.scoped(
        Effect.gen(function* () {
          const journal = yield* Journal
          expect(yield* Effect.flip(journal.watch)).toMatchObject({ _tag: "WrongType" })
          expect(yield* Effect.flip(journal.whenLoaded)).toMatchObject({ _tag: "JournalNotLoaded", reason: expect.stringContaining("WrongType") })
          expect(yield* Effect.flip(journal.record(torqueEvent(clock.now), { scope: "s1" }))).toMatchObject({ _tag: "JournalNotLoaded" })
          yield* raw((c) => c.del(scopesKey).then(() => c.sadd(scopesKey, ...members)))
          yield* journal.reload()
          yield* journal.whenLoaded
          expect((yield* journal.record(torqueEvent(clock.now), { scope: "s1" })).map((r) => r.journal)).toEqual(["torque"])
        }).pipe(Effect.provide(watching))
      )
    })
  )
})
