import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { engineWorld, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { jobOrderFor, linearRecipe, recipeWorkMaster, SCOPE, untilJobOrderIs, responseSummary, untilResponse } from "./RuntimeKit.js"

describe("SFC runtime: a recipe that finishes as it starts", () => {
  it.live("moves the job order through Running to Ended_Completed although Run and Complete share one write", () => {
    const world = engineWorld({})
    const workMaster = recipeWorkMaster("wm-instant", linearRecipe(["Only"], []))
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, workMaster)
      const ids = Array.from({ length: 10 }, (_, i) => `jo-instant-${i}`)
      yield* Effect.forEach(ids, (id) => putJobOrder(SCOPE, jobOrderFor(id, "wm-instant")), { concurrency: 10, discard: true })
      for (const id of ids) {
        expect(yield* untilJobOrderIs(id, "Ended_Completed")).toBe("Ended_Completed")
        expect(responseSummary(yield* untilResponse(id))).toMatchObject({ state: "Ended_Completed" })
      }
    }).pipe(Effect.provide(world.layer))
  })
})
