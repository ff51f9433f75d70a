import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option } from "effect"
import type { CommandEntry } from "@microdcs/sfc"
import { SfcStateDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { testStore } from "@microdcs/testkit"
import { Executions, SfcEngineProcesses, SfcEvents, SfcRuntimeServices, StationPort } from "@microdcs/sfc-runtime"
import { engineWorld, putJobOrder, putWorkMaster, testEngineOptions } from "./RuntimeFixtures.js"
import { executionOf, jobOrderFor, linearRecipe, pull, push, recipeWorkMaster, SCOPE, untilExecution, untilResponse } from "./RuntimeKit.js"

/**
 * The engine's loop against the real server: inputs handed in together share a tick, a job's
 * inputs are applied to one working copy in one write, and a conflict or a duplicate touches only
 * its own job and input.
 */

const TICK = "com.example.loop.tick.v1"
const SOURCE = "urn:test:station"
const recipe = linearRecipe(["First", "Second"], [pull("first", "First", { TypeId: TICK }), pull("second", "Second", { TypeId: TICK })])

const tick = (jobId: string, id: string, n: number) => ({
  jobId,
  input: { type: "event" as const, eventType: TICK, data: { n } },
  appliedEvent: { source: SOURCE, id }
})

const tagsOf = (exits: ReadonlyArray<Exit.Exit<{ readonly _tag: string }, unknown>>) => exits.map((exit) => (Exit.isSuccess(exit) ? exit.value._tag : "failed"))

/** Jobs of the two-event recipe, each waiting for its first event. */
const waitingJobs = (...jobIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-loop", recipe))
    for (const jobId of jobIds) yield* putJobOrder(SCOPE, jobOrderFor(jobId, "wm-loop"))
    for (const jobId of jobIds) yield* untilExecution(jobId, (s) => s.actions.some((a) => a.action === "first" && a.state === "waiting"))
  })

describe("SFC runtime: the engine's loop", () => {
  it.live("a job's inputs handed in together are applied in order to one working copy, in one write", () =>
    Effect.gen(function* () {
      yield* waitingJobs("jo-loop-1")
      const before = (yield* executionOf("jo-loop-1"))!.version
      const exits = yield* (yield* Executions).applyAll([tick("jo-loop-1", "e-1", 1), tick("jo-loop-1", "e-2", 2)])
      expect(tagsOf(exits)).toEqual(["Written", "Written"])
      const after = (yield* executionOf("jo-loop-1"))!
      expect(after.version).toBe(before + 1)
      expect(after.state.status).toBe("completed")
      expect(after.state.results).toEqual({ first: { n: 1 }, second: { n: 2 } })
    }).pipe(Effect.provide(engineWorld({}).layer))
  )

  it.live("a duplicate among them is answered as one; the job's other inputs still apply, and a repeat changes nothing", () =>
    Effect.gen(function* () {
      yield* waitingJobs("jo-loop-2")
      const executions = yield* Executions
      expect(tagsOf(yield* executions.applyAll([tick("jo-loop-2", "e-1", 1)]))).toEqual(["Written"])
      expect(tagsOf(yield* executions.applyAll([tick("jo-loop-2", "e-1", 1), tick("jo-loop-2", "e-2", 2)]))).toEqual(["Duplicate", "Written"])
      const done = (yield* executionOf("jo-loop-2"))!
      expect(done.state.results).toEqual({ first: { n: 1 }, second: { n: 2 } })
      // The job has ended: nothing to write, so no event check either (ingest reads the event record then).
      expect(tagsOf(yield* executions.applyAll([tick("jo-loop-2", "e-2", 2), tick("jo-loop-2", "e-1", 1)]))).toEqual(["Unchanged", "Unchanged"])
      expect((yield* executionOf("jo-loop-2"))!.version).toBe(done.version)
    }).pipe(Effect.provide(engineWorld({}).layer))
  )

  it.live("an event that changed nothing is not recorded with the job's write (routing by type may still give it to another job)", () =>
    Effect.gen(function* () {
      yield* waitingJobs("jo-loop-6")
      const other = { jobId: "jo-loop-6", input: { type: "event" as const, eventType: "com.example.nobody.v1", data: {} }, appliedEvent: { source: SOURCE, id: "e-other" } }
      const exits = yield* (yield* Executions).applyAll([tick("jo-loop-6", "e-6", 6), other])
      expect(tagsOf(exits)).toEqual(["Written", "Unchanged"])
      const states = yield* SfcStateDao
      expect(yield* states.eventApplied(SCOPE, SOURCE, "e-6")).toEqual(Option.some("jo-loop-6"))
      expect(yield* states.eventApplied(SCOPE, SOURCE, "e-other")).toEqual(Option.none())
    }).pipe(Effect.provide(engineWorld({}).layer))
  )

  it.live("a defect with one job's input is that input's alone: the other jobs of the tick are written", () =>
    Effect.gen(function* () {
      yield* waitingJobs("jo-loop-7", "jo-loop-8")
      const broken = { jobId: "jo-loop-7", input: () => { throw new Error("a bug in an input") } }
      const [bad, good] = yield* (yield* Executions).applyAll([broken, tick("jo-loop-8", "e-8", 8)])
      expect(Exit.isFailure(bad!) && Cause.hasDies(bad.cause)).toBe(true)
      expect(tagsOf([good!])).toEqual(["Written"])
      expect((yield* executionOf("jo-loop-8"))!.state.results).toEqual({ first: { n: 8 } })
    }).pipe(Effect.provide(engineWorld({}).layer))
  )

  it.live("a job another writer moved is read again and recomputed; the other jobs of the tick are written once", () =>
    Effect.gen(function* () {
      yield* waitingJobs("jo-loop-3", "jo-loop-4")
      const executions = yield* Executions
      const states = yield* SfcStateDao
      // Both states are in this process's cache; another writer moves one of them behind its back.
      const moved = (yield* executionOf("jo-loop-3"))!
      const other = (yield* executionOf("jo-loop-4"))!
      const stored = yield* states.get("jo-loop-3")
      yield* states.compareAndSet({
        jobId: "jo-loop-3", scope: SCOPE, expectedVersion: moved.version, doc: stored.doc, entries: [], due: null, active: true, waitsAdd: [], waitsRemove: []
      })
      const exits = yield* executions.applyAll([tick("jo-loop-3", "e-3", 3), tick("jo-loop-4", "e-4", 4)])
      expect(tagsOf(exits)).toEqual(["Written", "Written"])
      const [three, four] = [(yield* executionOf("jo-loop-3"))!, (yield* executionOf("jo-loop-4"))!]
      expect(three.version).toBe(moved.version + 2)
      expect(three.state.results).toEqual({ first: { n: 3 } })
      expect(four.version).toBe(other.version + 1)
      expect(four.state.results).toEqual({ first: { n: 4 } })
    }).pipe(Effect.provide(engineWorld({}).layer))
  )

  it.live("an input for a job without an execution is answered NoExecution, beside the others of its tick", () =>
    Effect.gen(function* () {
      yield* waitingJobs("jo-loop-5")
      const exits = yield* (yield* Executions).applyAll([tick("jo-nothing", "e-x", 0), tick("jo-loop-5", "e-5", 5)])
      expect(tagsOf(exits)).toEqual(["NoExecution", "Written"])
    }).pipe(Effect.provide(engineWorld({}).layer))
  )

  it.live("a send that hands in an input for its own job is not held up by the tick that wrote it", () => {
    // A station link that takes the reply in before its send returns: the reply is an input for
    // the job whose write is sending. Each command goes out once (a send held up past its
    // timeout would be sent again through the outbox), and the job completes.
    const sent: Array<CommandEntry> = []
    const answersInSend = Layer.effect(
      StationPort,
      Effect.map(SfcEvents, (events) => ({
        send: (command: CommandEntry) => {
          sent.push(command)
          const reply = { scope: SCOPE, source: SOURCE, id: `r-${command.correlationId}-${command.attempt}`, type: `${command.typeId}.reply`, correlationId: command.correlationId, data: { ok: true } }
          return Effect.asVoid(Effect.ignore(events.ingest(reply)))
        }
      }))
    )
    const layer = SfcEngineProcesses(testEngineOptions).pipe(
      Layer.provideMerge(answersInSend),
      Layer.provideMerge(SfcRuntimeServices),
      Layer.provideMerge(testStore({ prefix: randomPrefix("sfc-loop") }))
    )
    const steps = linearRecipe(["A", "B", "C"], [push("a", "A"), push("b", "B"), push("c", "C")])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-in-send", steps))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-in-send", "wm-in-send"))
      yield* untilResponse("jo-in-send")
      expect((yield* executionOf("jo-in-send"))!.state.status).toBe("completed")
      expect(sent.map((c) => c.action)).toEqual(["a", "b", "c"])
    }).pipe(Effect.provide(layer))
  })
})
