import { Effect } from "effect"
import { expect, layer } from "@effect/vitest"
import { ReturnStatus } from "@microdcs/job-state"
import { WorkMasterDao } from "@microdcs/store"
import { RECIPE_SCHEMA_ID_V1_1 } from "@microdcs/sfc"
import { configRequest, handle, handleOk, world } from "./Kit.js"

// Recipe v1.1.0 sub-recipes: a work master that reaches itself through sub-recipes, as far as the
// stored work masters tell, is refused where it is stored, every cycle listed.

/** A work master whose recipe's one step runs each of `children` as a sub-recipe. */
const workMaster = (id: string, ...children: ReadonlyArray<string>) => ({
  ID: id,
  dataschema: RECIPE_SCHEMA_ID_V1_1,
  data: {
    Steps: [{ Name: "Run", Initial: true }],
    Transitions: [],
    Actions: children.map((child, i) => ({
      Name: `run-${i}`, Step: "Run", Qualifier: "N", Interaction: "recipe", WorkMasterID: child, TypeId: `op.${child}`, TimeoutSeconds: 60
    }))
  }
})

layer(world())("sub-recipe cycles at the work master put", (it) => {
  it.effect("stores a chain without a way back; refuses the work master that closes it, listing every cycle, storing nothing", () =>
    Effect.gen(function* () {
      const workMasters = yield* WorkMasterDao
      yield* handleOk(configRequest("workmaster", "cyc", workMaster("cyc-b", "cyc-c")))
      yield* handleOk(configRequest("workmaster", "cyc", workMaster("cyc-c", "cyc-a", "cyc-leaf")))
      const refused = yield* handle(configRequest("workmaster", "cyc", workMaster("cyc-a", "cyc-a", "cyc-b", "cyc-leaf")))
      expect(refused.reply).toMatchObject({ status: ReturnStatus.INVALID_REQUEST, error: { kind: "InvalidRecipe" } })
      expect((refused.reply.data as { Problems: ReadonlyArray<{ message: string }> }).Problems.map((p) => p.message)).toEqual([
        'action "run-0": work master "cyc-a" → "cyc-a" runs itself through sub-recipes',
        'action "run-1": work master "cyc-a" → "cyc-b" → "cyc-c" → "cyc-a" runs itself through sub-recipes'
      ])
      expect((yield* Effect.result(workMasters.get("cyc-a")))._tag).toBe("Failure")
      // Without the cycle it is stored.
      yield* handleOk(configRequest("workmaster", "cyc", workMaster("cyc-a", "cyc-leaf")))
    })
  )
})
