import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { JobStates, type Trigger } from "@microdcs/job-state"
import { subRecipeJobId, validateRecipe } from "@microdcs/sfc"
import { Executions, JobOrderTransitions } from "@microdcs/sfc-runtime"
import { randomPrefix } from "@microdcs/test-utils"
import { engineWorld, eventually, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import {
  executionOf, jobOrderFor, observer, push, recipeWorkMasterV11, responseSummary, SCOPE, startInstance, stepJson, transition, untilExecution, untilJobOrderIs,
  untilResponse
} from "./RuntimeKit.js"

/** Recipe schema v1.1.0 sub-recipes through the runtime: a parent's action runs a child recipe. */

/** The child (an operation): Fill → Mix, each a station command. */
const dosing = {
  Steps: [stepJson("Fill", true), stepJson("Mix")],
  Transitions: [transition("Fill", "Mix")],
  Actions: [push("fill", "Fill"), push("mix", "Mix")]
}

/** The parent (a unit procedure): Prepare → Dose (the sub-recipe) → Pack. */
const batch = {
  Steps: [stepJson("Prepare", true), stepJson("Dose"), stepJson("Pack")],
  Transitions: [transition("Prepare", "Dose"), transition("Dose", "Pack")],
  Actions: [
    push("prepare", "Prepare"),
    push("dose", "Dose", { Interaction: "recipe", WorkMasterID: "wm-dosing", Parameters: { litres: 5 }, TimeoutSeconds: 60 }),
    push("pack", "Pack")
  ]
}

/** The parent with the sub-recipe first: Dose (the sub-recipe) → Pack. */
const doseFirst = {
  Steps: [stepJson("Dose", true), stepJson("Pack")],
  Transitions: [transition("Dose", "Pack")],
  Actions: [push("dose", "Dose", { Interaction: "recipe", WorkMasterID: "wm-dosing", TimeoutSeconds: 60 }), push("pack", "Pack")]
}

const mes = (jobId: string, method: Trigger) =>
  Effect.flatMap(JobOrderTransitions, (t) => t.apply(jobId, method)).pipe(Effect.tap((outcome) => Effect.sync(() => expect(outcome._tag).toBe("Applied"))))

describe("SFC runtime: sub-recipes (recipe schema v1.1.0)", () => {
  it.live("the parent runs the child recipe to its end, goes on with its results, and completes", () => {
    const world = engineWorld({ onCommand: (command) => ({ data: { ok: true, by: command.action } }) })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-dosing", dosing))
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-batch", batch))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-batch", "wm-batch"))
      const response = responseSummary(yield* untilResponse("jo-batch"))
      expect(response).toMatchObject({
        state: "Ended_Completed",
        data: { prepare: { ok: true }, dose: { fill: { ok: true, by: "fill" }, mix: { ok: true, by: "mix" } }, pack: { ok: true } }
      })
      yield* untilJobOrderIs("jo-batch", "Ended_Completed")
      // The child's commands went to the station under the child's own job id.
      const child = subRecipeJobId("jo-batch", "dose", 1)
      expect(world.station.commands.map((c) => [c.jobId, c.action])).toEqual([
        ["jo-batch", "prepare"], [child, "fill"], [child, "mix"], ["jo-batch", "pack"]
      ])
      const execution = yield* executionOf(child)
      expect(execution?.state).toMatchObject({ status: "completed", workMasterId: "wm-dosing", parent: { jobId: "jo-batch", action: "dose", rootJobId: "jo-batch" } })
      // The log links both ways: the child's execution names the parent's action node as its parent,
      // and its id is derived from the parent's, as the parent's action node names it.
      const parentLog = (yield* executionOf("jo-batch"))?.state.log?.executionId
      expect(parentLog).toBeDefined()
      expect(execution?.state.log?.executionId).toBe(`${parentLog}/dose/1`)
      expect(execution?.state.parent?.log).toMatchObject({ executionId: parentLog })
      expect(execution?.state.log?.open ?? []).toEqual([])
    }).pipe(Effect.provide(world.layer))
  })

  it.live("the MES aborts the parent while its child waits for the station: the child is aborted too", () => {
    const world = engineWorld({ onCommand: (command) => (command.action === "mix" ? "silent" : { data: { ok: true } }) })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-dosing", dosing))
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-batch", batch))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-abort", "wm-batch"))
      const child = subRecipeJobId("jo-abort", "dose", 1)
      yield* eventually(Effect.sync(() => (world.station.commands.some((c) => c.jobId === child && c.action === "mix") ? true : undefined)))
      expect((yield* (yield* JobOrderTransitions).apply("jo-abort", "Abort"))._tag).toBe("Applied")
      expect(responseSummary(yield* untilResponse("jo-abort"))).toMatchObject({ state: "Aborted" })
      const aborted = yield* untilExecution(child, (s) => s.status === "aborted")
      expect(aborted.state.error).toBe("the parent job aborted")
    }).pipe(Effect.provide(world.layer))
  })

  it.live("the MES pauses the root job: the child is paused with it and holds its command back; Resume sends it once", () => {
    const prefix = randomPrefix("sfc-sub-pause")
    const world = engineWorld({ onCommand: (command) => ({ data: { by: command.action, attempt: command.attempt } }) }, { prefix })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-dosing", dosing))
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-first", doseFirst))
      // The parent's first step (its child's start) is written while no engine runs; the MES pauses before it is handled.
      yield* putJobOrder(SCOPE, jobOrderFor("jo-sub-pause", "wm-first"), { state: JobStates.Running, change: "put" })
      const recipe = Result.getOrThrow(validateRecipe(doseFirst, "1.1.0"))
      yield* Effect.flatMap(Executions, (e) => e.create({ jobId: "jo-sub-pause", scope: SCOPE, workMasterId: "wm-first", recipe }))
      yield* mes("jo-sub-pause", "Pause")
      const engine = yield* startInstance(world.layer)
      const child = subRecipeJobId("jo-sub-pause", "dose", 1)
      const paused = yield* untilExecution(child, (s) => s.status === "paused" && (s.heldCommands ?? []).length === 1)
      expect(paused.state.heldCommands?.map((c) => c.action)).toEqual(["fill"])
      expect((yield* executionOf("jo-sub-pause"))?.state.status).toBe("paused")
      expect(world.station.commands).toEqual([])

      yield* mes("jo-sub-pause", "Resume")
      expect(responseSummary(yield* untilResponse("jo-sub-pause"))).toMatchObject({
        state: "Ended_Completed", data: { dose: { fill: { by: "fill", attempt: 1 }, mix: { by: "mix" } }, pack: { by: "pack" } }
      })
      expect(world.station.commands.map((c) => [c.jobId, c.action])).toEqual([[child, "fill"], [child, "mix"], ["jo-sub-pause", "pack"]])
      yield* engine.stop
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })

  it.live("Pause, Resume and Stop of the root job reach a child that waits for the station", () => {
    const world = engineWorld({ onCommand: (command) => (command.action === "mix" ? "silent" : { data: { ok: true } }) })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-dosing", dosing))
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-batch", batch))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-follow", "wm-batch"))
      const child = subRecipeJobId("jo-follow", "dose", 1)
      yield* eventually(Effect.sync(() => (world.station.commands.some((c) => c.jobId === child && c.action === "mix") ? true : undefined)))
      yield* mes("jo-follow", "Pause")
      const paused = yield* untilExecution(child, (s) => s.status === "paused")
      // The child's open action keeps what was left of its time, as a paused job's does.
      expect(paused.state.actions.find((a) => a.action === "mix")?.remainingMs).toBeGreaterThan(0)
      yield* mes("jo-follow", "Resume")
      yield* untilExecution(child, (s) => s.status === "running")
      yield* mes("jo-follow", "Stop")
      yield* untilExecution(child, (s) => s.status === "stopped")
      expect(responseSummary(yield* untilResponse("jo-follow"))).toMatchObject({ state: "Ended_Completed" })
    }).pipe(Effect.provide(world.layer))
  })
})
