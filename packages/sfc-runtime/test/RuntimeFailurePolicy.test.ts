import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { RECIPE_SCHEMA_ID_V1_1, validateWorkMasterRecipe } from "@microdcs/sfc"
import { engineWorld, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { dueScore, executionOf, jobOrderFor, push, responseSummary, SCOPE, stepJson, transition, untilJobOrderIs, untilResponse } from "./RuntimeKit.js"

/** Recipe schema v1.1.0 failure policies through the runtime: Retry back-off by the due index, OnError. */

/** A work master carrying a v1.1.0 recipe; a broken test recipe throws at once instead of timing out. */
const v11WorkMaster = (id: string, recipe: object): Record<string, unknown> => {
  const workMaster = { ID: id, Description: `test recipe ${id}`, dataschema: RECIPE_SCHEMA_ID_V1_1, data: recipe }
  const checked = validateWorkMasterRecipe(workMaster)
  if (checked === undefined || Result.isFailure(checked)) throw new Error(`invalid test recipe: ${JSON.stringify(checked)}`)
  return workMaster
}

/** Tighten (retried, OnError → Rework) → Done; Rework → Done when the error was a reply's. */
const recipe = (retry: object) => ({
  Steps: [stepJson("Tighten", true), stepJson("Rework"), stepJson("Done")],
  Transitions: [transition("Tighten", "Done"), transition("Rework", "Done", 'tighten.errorKind == "error"')],
  Actions: [push("tighten", "Tighten", { Retry: retry, OnError: "Rework" }), push("rework", "Rework"), push("done", "Done")]
})

const sendsOf = (commands: ReadonlyArray<{ readonly jobId: string; readonly action: string }>, jobId: string) =>
  commands.filter((c) => c.jobId === jobId).map((c) => c.action)

describe("SFC runtime: failure policies (recipe schema v1.1.0)", () => {
  it.live("an error reply, then success on the retry after its back-off: the job completes", () => {
    const tries = new Map<string, number>()
    const world = engineWorld({
      onCommand: (command) => {
        const n = (tries.get(command.jobId + command.action) ?? 0) + 1
        tries.set(command.jobId + command.action, n)
        return command.action === "tighten" && n === 1 ? { error: "jammed" } : { data: { ok: true } }
      }
    })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, v11WorkMaster("wm-retry", recipe({ MaxAttempts: 3, InitialIntervalSeconds: 0.2 })))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-retry", "wm-retry"))
      const response = responseSummary(yield* untilResponse("jo-retry"))
      expect(response).toMatchObject({ state: "Ended_Completed", data: { tighten: { ok: true }, done: { ok: true } } })
      yield* untilJobOrderIs("jo-retry", "Ended_Completed")
      expect(sendsOf(world.station.commands, "jo-retry")).toEqual(["tighten", "tighten", "done"])
      const [first, second] = world.station.commands.filter((c) => c.action === "tighten")
      expect(second!.correlationId).not.toBe(first!.correlationId)
      expect([first!.attempt, second!.attempt]).toEqual([1, 1])
      const execution = yield* executionOf("jo-retry")
      expect(execution?.state.history.map((h) => h.step)).toEqual(["Tighten", "Done"])
      expect(yield* dueScore(SCOPE, "jo-retry")).toBeNull()
    }).pipe(Effect.provide(world.layer))
  })

  it.live("retries spent on error replies: OnError leaves for Rework, which reads the error and completes the job", () => {
    const world = engineWorld({ onCommand: (command) => (command.action === "tighten" ? { error: "jammed" } : { data: { ok: true } }) })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, v11WorkMaster("wm-onerror", recipe({ MaxAttempts: 2, InitialIntervalSeconds: 0.1 })))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-onerror", "wm-onerror"))
      const response = responseSummary(yield* untilResponse("jo-onerror"))
      expect(response).toMatchObject({
        state: "Ended_Completed",
        data: { tighten: { error: "jammed", errorKind: "error", attempts: 2 }, rework: { ok: true }, done: { ok: true } }
      })
      expect(sendsOf(world.station.commands, "jo-onerror")).toEqual(["tighten", "tighten", "rework", "done"])
      const execution = yield* executionOf("jo-onerror")
      expect(execution?.state.history.map((h) => h.step)).toEqual(["Tighten", "Rework", "Done"])
    }).pipe(Effect.provide(world.layer))
  })
})
