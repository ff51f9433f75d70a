import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { subRecipeJobId } from "@microdcs/sfc"
import { JobOrderTransitions } from "@microdcs/sfc-runtime"
import { engineWorld, eventually, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import {
  executionOf, jobOrderFor, push, recipeWorkMasterV11, responseSummary, SCOPE, stepJson, transition, untilExecution, untilJobOrderIs, untilResponse
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
})
