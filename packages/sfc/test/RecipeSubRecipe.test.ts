import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { type Recipe, type RecipeProblem, recipeJsonSchema, subRecipeCycles, validateRecipe } from "@microdcs/sfc"
import { recipeBuilders } from "../src/testing.js"

// The recipe side of sub-recipes (schema v1.1.0): the action's shape, its version, and cycles
// through the stored work masters.

const { stepJson, transition, push } = recipeBuilders("")
const sub = (extra: Record<string, unknown> = {}) => push("dose", "Dose", { Interaction: "recipe", WorkMasterID: "wm-dose", ...extra })
const recipe = (dose: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  Steps: [stepJson("Dose", true), stepJson("Done")],
  Transitions: [transition("Dose", "Done")],
  Actions: [dose],
  ...extra
})
const v11 = { SchemaVersion: "1.1.0" }

const problemsOf = (result: Result.Result<unknown, ReadonlyArray<RecipeProblem>>): ReadonlyArray<RecipeProblem> => {
  if (Result.isSuccess(result)) throw new Error("expected problems")
  return result.failure
}
const brief = (problems: ReadonlyArray<RecipeProblem>) => problems.map((p) => [p.rule, p.path.join("."), p.message])

describe("a sub-recipe action in the recipe model", () => {
  it("is accepted under v1.1.0, with or without a pinned digest", () => {
    const decoded = Result.getOrThrow(validateRecipe(recipe(sub({ Digest: "0".repeat(64), Parameters: { volume: 5 } }), v11)))
    expect(decoded.Actions[0]).toMatchObject({ Interaction: "recipe", WorkMasterID: "wm-dose", Digest: "0".repeat(64), Parameters: { volume: 5 } })
    expect(Result.isSuccess(validateRecipe(recipe(sub(), v11)))).toBe(true)
  })

  it("needs v1.1.0: every construct of it in a v1.0.0 recipe is named", () => {
    expect(brief(problemsOf(validateRecipe(recipe(sub({ Digest: "0".repeat(64) })))))).toEqual([
      ["needs-v1.1", "Actions.0.Interaction", 'action "dose": Interaction "recipe" needs recipe schema v1.1.0'],
      ["needs-v1.1", "Actions.0.WorkMasterID", 'action "dose": WorkMasterID needs recipe schema v1.1.0'],
      ["needs-v1.1", "Actions.0.Digest", 'action "dose": Digest needs recipe schema v1.1.0']
    ])
  })

  it("lists every problem of its shape at once", () => {
    const { WorkMasterID: _left, ...bad } = sub({ Digest: "not-a-digest", Qualifier: "P" }) as Record<string, unknown>
    const other = push("press", "Done", { WorkMasterID: "wm-x", Digest: "0".repeat(64) })
    expect(brief(problemsOf(validateRecipe({ ...recipe(bad, v11), Actions: [bad, other] })))).toEqual([
      ["sub-recipe", "Actions.0.WorkMasterID", 'action "dose": a sub-recipe needs the WorkMasterID whose recipe it runs'],
      ["sub-recipe", "Actions.0.Digest", 'action "dose": Digest "not-a-digest" is not a recipe digest (64 lower-case hex digits)'],
      ["qualifier", "Actions.0.Qualifier", 'action "dose": a sub-recipe needs qualifier N; its step waits for the child\'s result'],
      ["sub-recipe", "Actions.1.WorkMasterID", 'action "press": WorkMasterID is for actions with Interaction "recipe"'],
      ["sub-recipe", "Actions.1.Digest", 'action "press": Digest is for actions with Interaction "recipe"']
    ])
  })

  it("is in the v1.1.0 JSON Schema only", () => {
    const v10 = JSON.stringify(recipeJsonSchema())
    const v11Schema = JSON.stringify(recipeJsonSchema("1.1.0"))
    expect(v10).not.toContain("WorkMasterID")
    expect(v10).not.toContain('"recipe"')
    expect(v11Schema).toContain("WorkMasterID")
    expect(v11Schema).toContain('"recipe"')
  })
})

describe("subRecipeCycles", () => {
  const calling = (...ids: ReadonlyArray<string>): Pick<Recipe, "Actions"> =>
    ({ Actions: ids.map((id, i) => ({ Name: `run-${i}`, Interaction: "recipe", WorkMasterID: id })) }) as unknown as Pick<Recipe, "Actions">

  it("finds a work master that runs itself, directly or over others, one problem per action with its chain", () => {
    const known = new Map([
      ["wm-b", calling("wm-c")],
      ["wm-c", calling("wm-a")],
      ["wm-d", calling()]
    ])
    expect(brief(subRecipeCycles("wm-a", calling("wm-a", "wm-b", "wm-d", "wm-unknown"), known))).toEqual([
      ["sub-recipe-cycle", "Actions.0.WorkMasterID", 'action "run-0": work master "wm-a" → "wm-a" runs itself through sub-recipes'],
      ["sub-recipe-cycle", "Actions.1.WorkMasterID", 'action "run-1": work master "wm-a" → "wm-b" → "wm-c" → "wm-a" runs itself through sub-recipes']
    ])
  })

  it("finds nothing without a way back, even through a cycle among others", () => {
    const known = new Map([["wm-b", calling("wm-c")], ["wm-c", calling("wm-b")]])
    expect(subRecipeCycles("wm-a", calling("wm-b"), known)).toEqual([])
  })
})
