import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import {
  decodeRecipe,
  RECIPE_SCHEMA_ID,
  RECIPE_SCHEMA_ID_V1_1,
  RECIPE_SCHEMA_IDS,
  reachableSteps,
  type RecipeProblem,
  validateRecipe,
  validateWorkMasterRecipe
} from "@microdcs/sfc"
import { recipeBuilders } from "../src/testing.js"

// The recipe side of an action's failure policy (schema v1.1.0): Retry and OnError.

const { stepJson, transition, push, pull } = recipeBuilders("")

const problemsOf = (result: Result.Result<unknown, ReadonlyArray<RecipeProblem>> | undefined): ReadonlyArray<RecipeProblem> => {
  if (result === undefined || Result.isSuccess(result)) throw new Error(`expected problems, got ${JSON.stringify(result)}`)
  return result.failure
}
const brief = (problems: ReadonlyArray<RecipeProblem>) => problems.map((p) => [p.rule, p.path.join("."), p.message])

/** Press → Done, with Rework reachable only through press's OnError. */
const recipe = (press: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  Steps: [stepJson("Press", true), stepJson("Rework"), stepJson("Done")],
  Transitions: [transition("Press", "Done"), transition("Rework", "Press")],
  Actions: [push("press", "Press", { Retry: { MaxAttempts: 3 }, OnError: "Rework", ...press }), push("rework", "Rework")],
  ...extra
})
const v11 = <T extends object>(json: T) => ({ ...json, SchemaVersion: "1.1.0" })

describe("Retry and OnError in the recipe model", () => {
  it("are accepted under schema v1.1.0, snake_case too, and decode with their defaults left out", () => {
    const decoded = Result.getOrThrow(validateRecipe(v11(recipe({ Retry: { MaxAttempts: 2, InitialIntervalSeconds: 0.5, BackoffCoefficient: 1.5, MaximumIntervalSeconds: 3 } }))))
    expect(decoded.Actions[0]).toMatchObject({ Retry: { MaxAttempts: 2, InitialIntervalSeconds: 0.5, BackoffCoefficient: 1.5, MaximumIntervalSeconds: 3 }, OnError: "Rework" })
    expect(decoded.SchemaVersion).toBe("1.1.0")
    const snake = { ...recipe(), Actions: [{ ...push("press", "Press"), retry: { max_attempts: 2, initial_interval_seconds: 2 }, on_error: "Rework" }, push("rework", "Rework")] }
    expect(Result.getOrThrow(validateRecipe(v11(snake))).Actions[0]).toMatchObject({ Retry: { MaxAttempts: 2, InitialIntervalSeconds: 2 }, OnError: "Rework" })
  })

  it("need schema v1.1.0: a v1.0.0 recipe naming them gets a needs-v1.1 problem for each", () => {
    expect(brief(problemsOf(validateRecipe(recipe())))).toEqual([
      ["needs-v1.1", "Actions.0.Retry", 'action "press": Retry needs recipe schema v1.1.0'],
      ["needs-v1.1", "Actions.0.OnError", 'action "press": OnError needs recipe schema v1.1.0']
    ])
  })

  it("take the version from the work master's dataschema; a recipe that names another is refused", () => {
    expect(RECIPE_SCHEMA_IDS).toEqual({ "1.0.0": RECIPE_SCHEMA_ID, "1.1.0": RECIPE_SCHEMA_ID_V1_1 })
    const { SchemaVersion: _named, ...withFailurePolicy } = v11(recipe()) as Record<string, unknown>
    const v1 = validateWorkMasterRecipe({ dataschema: RECIPE_SCHEMA_ID, data: withFailurePolicy })
    expect(problemsOf(v1).map((p) => p.rule)).toEqual(["needs-v1.1", "needs-v1.1"])
    const accepted = Result.getOrThrow(validateWorkMasterRecipe({ dataschema: RECIPE_SCHEMA_ID_V1_1, data: recipe() })!)
    expect(accepted.SchemaVersion).toBe("1.1.0")
    expect(problemsOf(validateWorkMasterRecipe({ dataschema: RECIPE_SCHEMA_ID_V1_1, data: { ...recipe(), SchemaVersion: "1.0.0" } })).map((p) => p.rule)).toEqual(["structure"])
    // A v1.0.0 recipe decodes exactly as before: no version field appears.
    const plain = { Steps: [stepJson("A", true)], Transitions: [], Actions: [push("a", "A")] }
    expect(Result.getOrThrow(validateWorkMasterRecipe({ dataschema: RECIPE_SCHEMA_ID, data: plain })!)).not.toHaveProperty("SchemaVersion")
  })

  it("lists every out-of-range number of a retry policy, with its path", () => {
    const bad = { MaxAttempts: 1.5, InitialIntervalSeconds: -1, BackoffCoefficient: 0.5, MaximumIntervalSeconds: 0 }
    expect(brief(problemsOf(validateRecipe(v11(recipe({ Retry: bad })))))).toEqual([
      ["retry", "Actions.0.Retry.MaxAttempts", 'action "press": Retry.MaxAttempts must be a positive integer, not 1.5'],
      ["retry", "Actions.0.Retry.InitialIntervalSeconds", 'action "press": Retry.InitialIntervalSeconds must be a positive number, not -1'],
      ["retry", "Actions.0.Retry.BackoffCoefficient", 'action "press": Retry.BackoffCoefficient must be a number of at least 1, not 0.5'],
      ["retry", "Actions.0.Retry.MaximumIntervalSeconds", 'action "press": Retry.MaximumIntervalSeconds must be a positive number, not 0']
    ])
    expect(brief(problemsOf(validateRecipe(v11(recipe({ Retry: { MaxAttempts: 0, InitialIntervalSeconds: 5, MaximumIntervalSeconds: 2 } })))))).toEqual([
      ["retry", "Actions.0.Retry.MaxAttempts", 'action "press": Retry.MaxAttempts must be a positive integer, not 0'],
      ["retry", "Actions.0.Retry.MaximumIntervalSeconds", 'action "press": Retry.MaximumIntervalSeconds must be at least InitialIntervalSeconds (5), not 2']
    ])
    // The decoder of trusted snapshots refuses them too.
    expect(Result.isFailure(decodeRecipe(v11(recipe({ Retry: { MaxAttempts: 0 } }))))).toBe(true)
  })

  it("still judges retry policies when the recipe's shape is broken elsewhere", () => {
    const { Steps: _steps, ...noSteps } = v11(recipe({ Retry: { MaxAttempts: -2 } }))
    expect(problemsOf(validateRecipe(noSteps)).map((p) => p.rule)).toEqual(["structure", "retry"])
  })

  it("refuses both on a pulse, which is sent once and never waited for", () => {
    expect(brief(problemsOf(validateRecipe(v11(recipe({ Qualifier: "P" })))))).toEqual([
      ["qualifier", "Actions.0.Qualifier", 'action "press": Retry and OnError need qualifier N; a pulse (P) is sent once and its step does not wait for it']
    ])
  })

  it("checks the OnError target: it exists, is no path step, and the action's step is on no path", () => {
    const branched = (press: Record<string, unknown>) =>
      v11({
        Steps: [stepJson("Press", true), stepJson("A"), stepJson("B"), stepJson("Done")],
        Branches: [{ Name: "Fork", Type: "simultaneous", Branches: [["A"], ["B"]] }],
        Transitions: [transition("Press", "Fork"), transition("Fork", "Done")],
        Actions: [push("press", "Press", press), push("a", "A", { OnError: "Done" })]
      })
    expect(brief(problemsOf(validateRecipe(branched({ OnError: "Nowhere" }))))).toEqual([
      ["unknown-reference", "Actions.0.OnError", 'action "press": OnError target "Nowhere" is neither a step nor a branch'],
      ["branch-path", "Actions.1.OnError", 'action "a" is on step "A" of branch "Fork": a step on a branch path is not left by OnError']
    ])
    expect(brief(problemsOf(validateRecipe(branched({ OnError: "B" })))).slice(0, 1)).toEqual([
      ["branch-path", "Actions.0.OnError", 'action "press": OnError enters "B", a step of branch "Fork"; a path is entered through its branch']
    ])
  })

  it("counts OnError edges for reachability: a step reached only through one is reachable", () => {
    expect(reachableSteps(recipe(), ["Press"])).toEqual(new Set(["Press", "Rework", "Done"]))
    const unreachable = validateRecipe(v11({ ...recipe(), Actions: [push("press", "Press", { Retry: { MaxAttempts: 3 } }), push("rework", "Rework")] }))
    expect(brief(problemsOf(unreachable))).toEqual([["unreachable", "Steps.1", 'step "Rework" is not reachable from the initial step "Press"']])
    expect(Result.isSuccess(validateRecipe(v11({ ...recipe(), Actions: [...recipe().Actions, pull("scan", "Done", { Retry: { MaxAttempts: 2 } })] })))).toBe(true)
  })
})
