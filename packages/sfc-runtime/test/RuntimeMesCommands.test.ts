import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { type JobResponse, JobStates, type Trigger } from "@microdcs/job-state"
import { SfcStateDao, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { correlationIdOf, validateRecipe } from "@microdcs/sfc"
import { defaultEngineOptions, Executions, JobOrderTransitions } from "@microdcs/sfc-runtime"
import { randomPrefix } from "@microdcs/test-utils"
import { engineWorld, eventually, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import {
  dueScore,
  executionOf,
  jobOrderFor,
  observer,
  linearRecipe,
  push,
  recipeWorkMaster,
  SCOPE,
  startInstance,
  stepJson,
  transition,
  untilExecution,
  untilJobOrderIs,
  responseSummary,
  untilResponse
} from "./RuntimeKit.js"

/**
 * The engine follows the MES. The test drives each method as the
 * job-control processor does: a versioned put of the job order with the method as change word.
 */
const mes = (jobId: string, method: Trigger) =>
  Effect.flatMap(JobOrderTransitions, (t) => t.apply(jobId, method)).pipe(
    Effect.tap((outcome) => Effect.sync(() => expect(outcome._tag).toBe("Applied")))
  )

const decodedRecipe = (json: object) => Result.getOrThrow(validateRecipe(json))

const commandsOf = (log: { readonly commands: ReadonlyArray<{ readonly action: string }> }) => log.commands.map((c) => c.action)

/** True once the engine's group on `sfc:work:{scope}` has taken and acknowledged every entry. */
const workHandled = (scope: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("sfcWork", { scope })
    return yield* unsafeCommand(valkey, "work handled", async (c) => {
      const last = ((await c.xrevrange(key, "+", "-", "COUNT", 1)) as Array<[string, Array<string>]>)[0]?.[0]
      const groups = (await c.xinfo("GROUPS", key)) as Array<Array<unknown>>
      const info = groups.map((flat) => Object.fromEntries(Array.from({ length: flat.length / 2 }, (_, i) => [String(flat[2 * i]), flat[2 * i + 1]])))
      const group = info.find((g) => g["name"] === defaultEngineOptions.workGroup)
      return group !== undefined && Number(group["pending"]) === 0 && group["last-delivered-id"] === last ? true : undefined
    })
  })

describe("SFC runtime: MES commands", () => {
  it.live("Pause freezes the open deadline (no resend while paused); Resume continues from the time left", () => {
    // The first send is lost; only the resend after Resume is answered.
    const world = engineWorld({ onCommand: (c) => (c.action === "work" && c.attempt === 1 ? "silent" : { data: { attempt: c.attempt } }) })
    const recipe = linearRecipe(["Work", "Finish"], [push("work", "Work", { TimeoutSeconds: 0.6 }), push("finish", "Finish")])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-pause", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-pause", "wm-pause"))
      yield* untilJobOrderIs("jo-pause", "Running")
      yield* eventually(Effect.sync(() => world.station.commands[0]))

      yield* mes("jo-pause", "Pause")
      const paused = yield* untilExecution("jo-pause", (s) => s.status === "paused")
      const frozen = paused.state.actions[0]!
      expect(frozen.deadline).toBeUndefined()
      expect(frozen.remainingMs).toBeGreaterThan(0)
      expect(frozen.remainingMs).toBeLessThanOrEqual(600)
      expect(yield* dueScore(SCOPE, "jo-pause")).toBeNull()

      // Well past the original deadline: a running job would have been resent by now.
      yield* Effect.sleep("900 millis")
      expect(commandsOf(world.station)).toEqual(["work"])
      expect((yield* executionOf("jo-pause"))?.state.status).toBe("paused")

      const resumedAt = Date.now()
      yield* mes("jo-pause", "Resume")
      const running = yield* untilExecution("jo-pause", (s) => s.status === "running")
      const thawed = running.state.actions[0]!
      expect(thawed.remainingMs).toBeUndefined()
      expect(thawed.deadline! - resumedAt).toBeGreaterThanOrEqual(frozen.remainingMs!)
      expect(thawed.deadline! - resumedAt).toBeLessThan(frozen.remainingMs! + 1000)

      const response = yield* untilResponse("jo-pause")
      expect(responseSummary(response)).toMatchObject({ state: "Ended_Completed", data: { work: { attempt: 2 }, finish: { attempt: 1 } } })
      expect(commandsOf(world.station)).toEqual(["work", "work", "finish"])
      expect(new Set(world.station.commands.slice(0, 2).map((c) => c.correlationId)).size).toBe(1)
      yield* untilJobOrderIs("jo-pause", "Ended_Completed")
    }).pipe(Effect.provide(world.layer))
  })

  it.live("a command held back by Pause between step entry and send goes out on Resume, once, as attempt 1", () => {
    const prefix = randomPrefix("sfc-held")
    const world = engineWorld({ onCommand: (c) => ({ data: { attempt: c.attempt } }) }, { prefix })
    // A long timeout: a send that waited for the deadline would come far too late for this test.
    const recipe = linearRecipe(["Work"], [push("work", "Work", { TimeoutSeconds: 60 })])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-held", recipe))
      // The step is entered (its command entry written) while no engine runs; the MES pauses
      // before the entry is handled.
      yield* putJobOrder(SCOPE, jobOrderFor("jo-held", "wm-held"), { state: JobStates.Running, change: "put" })
      yield* Effect.flatMap(Executions, (e) => e.create({ jobId: "jo-held", scope: SCOPE, workMasterId: "wm-held", recipe: decodedRecipe(recipe) }))
      yield* mes("jo-held", "Pause")
      const engine = yield* startInstance(world.layer)
      yield* untilExecution("jo-held", (s) => s.status === "paused")
      yield* eventually(workHandled(SCOPE))
      expect(world.station.commands).toEqual([])

      yield* mes("jo-held", "Resume")
      yield* eventually(Effect.sync(() => world.station.commands[0]), 5_000)
      expect(world.station.commands[0]).toMatchObject({ action: "work", attempt: 1, correlationId: correlationIdOf("jo-held", "work", 1) })
      expect(responseSummary(yield* untilResponse("jo-held"))).toMatchObject({ state: "Ended_Completed", data: { work: { attempt: 1 } } })
      yield* eventually(workHandled(SCOPE))
      expect(commandsOf(world.station)).toEqual(["work"])
      yield* engine.stop
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })

  it.live("a command held back by Pause is never sent when the MES stops the paused job", () => {
    const prefix = randomPrefix("sfc-held-stop")
    const world = engineWorld({ onCommand: () => ({ data: { ok: true } }) }, { prefix })
    const recipe = linearRecipe(["Work"], [push("work", "Work", { TimeoutSeconds: 60 })])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-held-stop", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-held-stop", "wm-held-stop"), { state: JobStates.Running, change: "put" })
      yield* Effect.flatMap(Executions, (e) => e.create({ jobId: "jo-held-stop", scope: SCOPE, workMasterId: "wm-held-stop", recipe: decodedRecipe(recipe) }))
      yield* mes("jo-held-stop", "Pause")
      const engine = yield* startInstance(world.layer)
      yield* untilExecution("jo-held-stop", (s) => s.status === "paused" && (s.heldCommands ?? []).length === 1)
      yield* mes("jo-held-stop", "Stop")
      const stopped = yield* untilExecution("jo-held-stop", (s) => s.status === "stopped")
      expect(stopped.state.heldCommands).toBeUndefined()
      yield* untilResponse("jo-held-stop")
      yield* eventually(workHandled(SCOPE))
      expect(world.station.commands).toEqual([])
      yield* engine.stop
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })

  it.live("Pause and Resume handled in one batch leave the execution running, as the job order is", () => {
    const prefix = randomPrefix("sfc-flicker")
    const world = engineWorld({ onCommand: () => ({ data: { ok: true } }) }, { prefix })
    const recipe = linearRecipe(["Work", "Finish"], [push("work", "Work", { TimeoutSeconds: 0.3 }), push("finish", "Finish")])
    const jobs = [0, 1, 2, 3, 4].map((i) => `jo-flicker-${i}`)
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-flicker", recipe))
      // The engine is down while the MES pauses and resumes: its change consumer then reads both
      // entries in one batch and handles them concurrently, the order the CAS sees is arbitrary.
      yield* Effect.forEach(jobs, (jobId) => putJobOrder(SCOPE, jobOrderFor(jobId, "wm-flicker"), { state: JobStates.Running, change: "put" }))
      for (const jobId of jobs) {
        yield* Effect.flatMap(Executions, (e) => e.create({ jobId, scope: SCOPE, workMasterId: "wm-flicker", recipe: decodedRecipe(recipe) }))
        yield* mes(jobId, "Pause")
        yield* mes(jobId, "Resume")
      }
      const engine = yield* startInstance(world.layer)
      for (const jobId of jobs) {
        expect(responseSummary(yield* untilResponse(jobId))).toMatchObject({ state: "Ended_Completed" })
        expect((yield* executionOf(jobId))?.state.status).toBe("completed")
      }
      yield* engine.stop
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })

  /** A simultaneous branch whose path A is at its second step and whose path B waits: the MES ends it there. */
  const endMidBranch = <E, R>(
    method: "Stop" | "Abort",
    jobId: string,
    then: (response: JobResponse) => Effect.Effect<void, E, R>
  ) => {
    const world = engineWorld({ onCommand: (c) => (c.action === "a2" || c.action === "b1" ? "silent" : { data: { done: c.action } }) })
    const recipe = {
      Steps: ["Prepare", "A1", "A2", "B1", "End"].map((name, i) => stepJson(name, i === 0)),
      Branches: [{ Name: "Par", Type: "simultaneous", Branches: [["A1", "A2"], ["B1"]] }],
      Transitions: [transition("Prepare", "Par"), transition("Par", "End")],
      Actions: [
        push("prepare", "Prepare"),
        push("a1", "A1"),
        push("a2", "A2", { TimeoutSeconds: 0.4 }),
        push("b1", "B1", { TimeoutSeconds: 0.4 }),
        push("end", "End")
      ]
    }
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster(`wm-${jobId}`, recipe))
      yield* putJobOrder(SCOPE, jobOrderFor(jobId, `wm-${jobId}`))
      yield* eventually(Effect.sync(() => (commandsOf(world.station).includes("a2") && commandsOf(world.station).includes("b1") ? true : undefined)))

      yield* mes(jobId, method)
      const ended = yield* untilExecution(jobId, (s) => s.status === (method === "Stop" ? "stopped" : "aborted"))
      expect(ended.state.actions).toEqual([])
      expect(ended.state.branches).toEqual([])
      const sentAtEnd = world.station.commands.length
      const response = yield* untilResponse(jobId)
      expect(response.JobOrderID).toBe(jobId)
      expect(responseSummary(response).data).toMatchObject({ prepare: { done: "prepare" }, a1: { done: "a1" } })

      // Two timeouts later: no resend of a2 or b1, no step after the branch.
      yield* Effect.sleep("1 second")
      expect(world.station.commands).toHaveLength(sentAtEnd)
      expect(commandsOf(world.station)).not.toContain("end")
      const states = yield* SfcStateDao
      expect(yield* states.listActive(SCOPE)).toEqual([])
      expect(yield* dueScore(SCOPE, jobId)).toBeNull()
      yield* then(response)
    }).pipe(Effect.provide(world.layer))
  }

  it.live("Stop in the middle of a simultaneous branch: execution stopped, response Ended_Completed, nothing sent after", () =>
    endMidBranch("Stop", "jo-stop", (response) =>
      Effect.gen(function* () {
        expect(responseSummary(response)).toMatchObject({ state: "Ended_Completed", error: undefined })
        yield* untilJobOrderIs("jo-stop", "Ended_Completed")
        // Clear removes the execution state.
        yield* mes("jo-stop", "Clear")
        yield* eventually(executionOf("jo-stop").pipe(Effect.map((e) => (e === undefined ? true : undefined))))
      })
    )
  )

  it.live("Abort in the middle of a simultaneous branch: execution aborted, response Aborted with the reason", () =>
    endMidBranch("Abort", "jo-abort", (response) =>
      Effect.gen(function* () {
        expect(responseSummary(response)).toMatchObject({ state: "Aborted", error: expect.stringContaining("aborted") })
        yield* untilJobOrderIs("jo-abort", "Aborted")
      })
    )
  )
})
