import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { PollerEntry } from "@microdcs/poller"
import { Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { defaultEngineOptions, JobOrderTransitions, SfcEvents } from "@microdcs/sfc-runtime"
// The work-entry handler is internal to the runtime; the test plays the poller redelivering.
import { handleWorkEntry } from "../src/OutboxHandler.js"
import { engineWorld, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import {
  changeEntries,
  executionOf,
  jobOrderFor,
  jobOrderState,
  linearRecipe,
  pull,
  push,
  recipeWorkMaster,
  SCOPE,
  untilExecution,
  untilJobOrderIs,
  responseSummary,
  untilResponse
} from "./RuntimeKit.js"

/** At-least-once delivery everywhere: every redelivered event and work entry must be a no-op. */

const TICK = "com.example.tick.v1"

/** The job's entries of `sfc:work:{scope}` as the poller would deliver them again. */
const workEntries = (jobId: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const stream = yield* valkey.key("sfcWork", { scope: SCOPE })
    const raw = (yield* unsafeCommand(valkey, "xrange", (c) => c.xrange(stream, "-", "+"))) as Array<[string, Array<string>]>
    return raw
      .map(([id, flat]): PollerEntry => {
        const fields: Record<string, string> = {}
        for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!
        return { kind: "sfc", scope: SCOPE, stream, id, fields, deliveries: 2 }
      })
      .filter((e) => e.fields["jobId"] === jobId)
  })

const redeliver = (entry: PollerEntry | undefined) => {
  expect(entry).toBeDefined()
  return handleWorkEntry(defaultEngineOptions)(entry!)
}

describe("SFC runtime: redelivery", () => {
  it.live("a redelivered event (same source and id) is a Duplicate and changes nothing, also after the job moved on", () => {
    const world = engineWorld({})
    // Two steps waiting for the same event type: a redelivered first event must not complete the second.
    const recipe = linearRecipe(["First", "Second"], [pull("first", "First", { TypeId: TICK }), pull("second", "Second", { TypeId: TICK })])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-ticks", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-ticks", "wm-ticks"))
      yield* untilExecution("jo-ticks", (s) => s.actions.some((a) => a.action === "first" && a.state === "waiting"))
      const events = yield* SfcEvents
      const tick = (id: string, n: number) => ({ scope: SCOPE, source: "urn:test:station", id, type: TICK, data: { n } })

      expect(yield* events.ingest(tick("evt-1", 1))).toEqual({ _tag: "Applied", jobId: "jo-ticks" })
      const moved = yield* executionOf("jo-ticks")
      expect(moved?.state.actions).toMatchObject([{ action: "second", state: "waiting" }])

      expect(yield* events.ingest(tick("evt-1", 1))).toEqual({ _tag: "Duplicate", jobId: "jo-ticks" })
      const same = yield* executionOf("jo-ticks")
      expect(same?.version).toBe(moved?.version)
      expect(same?.state).toEqual(moved?.state)

      // Named by job id, after the job completed: still a duplicate, not "ignored".
      expect(yield* events.ingest({ ...tick("evt-2", 2), jobId: "jo-ticks" })).toEqual({ _tag: "Applied", jobId: "jo-ticks" })
      const done = yield* executionOf("jo-ticks")
      expect(done?.state.status).toBe("completed")
      expect(yield* events.ingest({ ...tick("evt-2", 2), jobId: "jo-ticks" })).toEqual({ _tag: "Duplicate", jobId: "jo-ticks" })
      expect((yield* executionOf("jo-ticks"))?.version).toBe(done?.version)
      // The same id from another source is another event.
      expect((yield* events.ingest({ ...tick("evt-2", 3), source: "urn:test:other" }))._tag).toBe("Ignored")

      expect(responseSummary(yield* untilResponse("jo-ticks"))).toMatchObject({ data: { first: { n: 1 }, second: { n: 2 } } })
    }).pipe(Effect.provide(world.layer))
  })

  it.live("redelivered work entries of a finished job move nothing, store nothing and send nothing", () => {
    // The test reads the processed work entries back from the stream: no trim may remove them first.
    const world = engineWorld({ onCommand: () => ({ data: { ok: true } }) }, { engine: { workTrimIntervalMs: 0 } })
    const recipe = linearRecipe(["Work"], [push("work", "Work")])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-redeliver", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-redeliver", "wm-redeliver"))
      yield* untilResponse("jo-redeliver")
      yield* untilJobOrderIs("jo-redeliver", "Ended_Completed")
      const changesBefore = (yield* changeEntries(SCOPE)).length
      const sentBefore = world.station.commands.length
      const entries = yield* workEntries("jo-redeliver")
      expect(entries.map((e) => e.fields["type"])).toEqual(["joborder", "command", "joborder", "jobresponse"])

      for (const entry of entries) yield* redeliver(entry)

      expect(yield* jobOrderState("jo-redeliver")).toBe("Ended_Completed")
      expect((yield* executionOf("jo-redeliver"))?.state.status).toBe("completed")
      expect(world.station.commands).toHaveLength(sentBefore)
      expect((yield* changeEntries(SCOPE)).length).toBe(changesBefore)
    }).pipe(Effect.provide(world.layer))
  })

  it.live("a redelivered Run entry leaves a running or paused job alone", () => {
    const world = engineWorld({ onCommand: () => "silent" })
    const recipe = linearRecipe(["Work"], [push("work", "Work", { TimeoutSeconds: 30 })])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-rerun", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-rerun", "wm-rerun"))
      yield* untilJobOrderIs("jo-rerun", "Running")
      const run = (yield* workEntries("jo-rerun")).find((e) => e.fields["type"] === "joborder")

      yield* redeliver(run)
      expect(yield* jobOrderState("jo-rerun")).toBe("Running")
      expect((yield* executionOf("jo-rerun"))?.state.status).toBe("running")

      yield* Effect.flatMap(JobOrderTransitions, (t) => t.apply("jo-rerun", "Pause"))
      yield* untilExecution("jo-rerun", (s) => s.status === "paused")
      yield* redeliver(run)
      expect(yield* jobOrderState("jo-rerun")).toBe("Interrupted_Suspended")
      expect((yield* executionOf("jo-rerun"))?.state.status).toBe("paused")
    }).pipe(Effect.provide(world.layer))
  })
})
