import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Option } from "effect"
import { SfcStateDao } from "@microdcs/store"
import { Executions, SfcEvents } from "@microdcs/sfc-runtime"
import { validateRecipe } from "@microdcs/sfc"
import { randomPrefix } from "@microdcs/test-utils"
import { linearRecipe, observer, pull, SCOPE } from "./RuntimeKit.js"

/** Events without a correlation id or job id go to the job that has waited longest for their type. */

const TICK = "com.example.tick.v1"

// Two steps in a row waiting for the same type: the wait ends and a new one starts in one write.
const twoTicks = Result.getOrThrow(
  validateRecipe(linearRecipe(["First", "Second"], [pull("first", "First", { TypeId: TICK }), pull("second", "Second", { TypeId: TICK })]))
)

/** Lets the clock pass at least one millisecond, so two writes get different wait starts. */
const nextMillisecond = (after: number) =>
  Effect.gen(function* () {
    while (Date.now() <= after) yield* Effect.sleep("1 millis")
  })

describe("SFC runtime: events routed by type", () => {
  it.live("a job that waits for the same type twice in a row queues behind a job that has waited longer", () => {
    const prefix = randomPrefix("sfc-route")
    return Effect.gen(function* () {
      const executions = yield* Executions
      const events = yield* SfcEvents
      const states = yield* SfcStateDao
      const tick = (id: string) => events.ingest({ scope: SCOPE, source: "urn:test:station", id, type: TICK, data: { id } })
      const waitingJobs = Effect.map(states.waiting(SCOPE, TICK), (jobs) => jobs.map((j) => j.jobId))

      const started = Date.now()
      yield* executions.create({ jobId: "jo-early", scope: SCOPE, workMasterId: "wm", recipe: twoTicks })
      yield* nextMillisecond(Date.now())
      yield* executions.create({ jobId: "jo-late", scope: SCOPE, workMasterId: "wm", recipe: twoTicks })
      expect(yield* waitingJobs).toEqual(["jo-early", "jo-late"])

      // The first event goes to the job that waited first; its next wait starts now, after the other job's.
      yield* nextMillisecond(Date.now())
      expect(yield* tick("evt-1")).toEqual({ _tag: "Applied", jobId: "jo-early" })
      expect(yield* waitingJobs).toEqual(["jo-late", "jo-early"])
      const early = Option.getOrThrow(yield* executions.load("jo-early"))
      const restarted = early.state.actions.find((a) => a.action === "second")!.waitSince!
      expect((yield* states.waiting(SCOPE, TICK)).find((j) => j.jobId === "jo-early")?.since).toBe(restarted)
      expect(restarted).toBeGreaterThan(started)

      // So the second event goes to the job that has waited longest now, not to the first one again.
      yield* nextMillisecond(Date.now())
      expect(yield* tick("evt-2")).toEqual({ _tag: "Applied", jobId: "jo-late" })
      expect(yield* tick("evt-3")).toEqual({ _tag: "Applied", jobId: "jo-early" })
      expect(yield* tick("evt-4")).toEqual({ _tag: "Applied", jobId: "jo-late" })
      expect(yield* waitingJobs).toEqual([])
      for (const jobId of ["jo-early", "jo-late"]) {
        const done = Option.getOrThrow(yield* executions.load(jobId))
        expect(done.state.status).toBe("completed")
        expect(done.state.results).toEqual({ first: { id: jobId === "jo-early" ? "evt-1" : "evt-2" }, second: { id: jobId === "jo-early" ? "evt-3" : "evt-4" } })
      }
    }).pipe(Effect.provide(observer(prefix)))
  })
})
