import { readFileSync, writeFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Result } from "effect"
import fc from "fast-check"
import {
  decodeRecipe,
  encodeRecipe,
  parseDuration,
  reachableSteps,
  RECIPE_SCHEMA_ID,
  RECIPE_SCHEMA_ID_V1_1,
  RECIPE_SCHEMA_IDS,
  recipeJsonSchema,
  type RecipeProblem,
  recipeSchemaVersion,
  validateRecipe,
  validateWorkMasterRecipe
} from "@microdcs/sfc"

// Recipe schema v1.1.0 beside v1.0.0: the ids, the version a recipe runs by, the time limit
// fields and their rules, and the published v1.1.0 JSON Schema.

const problemsOf = (result: Result.Result<unknown, ReadonlyArray<RecipeProblem>> | undefined): ReadonlyArray<RecipeProblem> => {
  if (result === undefined || Result.isSuccess(result)) throw new Error("expected problems")
  return result.failure
}

const action = (Name: string, Step: string) => ({ Name, Step, Qualifier: "N", Interaction: "push_command", TypeId: `com.example.${Name}`, TimeoutSeconds: 10 })

/** Press (limited, on to Rework) → Done; Rework → Done. */
const limited = {
  Steps: [{ Name: "Press", Initial: true, MaxDuration: "30s", OnMaxDuration: "Rework" }, { Name: "Rework" }, { Name: "Done" }],
  Transitions: [
    { Source: "Press", Target: "Done", Condition: "press.ok" },
    { Source: "Rework", Target: "Done", Condition: "true" }
  ],
  Actions: [action("press", "Press")],
  MaxJobDuration: "2h"
}

describe("recipe schema versions", () => {
  it("names each version by its own dataschema id", () => {
    expect(RECIPE_SCHEMA_ID_V1_1).toBe("https://aschamberger.github.io/schemas/microdcs/sfc-recipe/v1.1.0/")
    expect(RECIPE_SCHEMA_IDS).toEqual({ "1.0.0": RECIPE_SCHEMA_ID, "1.1.0": RECIPE_SCHEMA_ID_V1_1 })
  })

  it("runs a work master's recipe by the version its dataschema names; v1.0.0 recipes carry no version, so their JSON and digest stay", () => {
    const v11 = Result.getOrThrow(validateWorkMasterRecipe({ ID: "wm", dataschema: RECIPE_SCHEMA_ID_V1_1, data: limited })!)
    expect(v11.SchemaVersion).toBe("1.1.0")
    expect(recipeSchemaVersion(v11)).toBe("1.1.0")
    expect(v11.Steps[0]).toEqual({ Name: "Press", Initial: true, MaxDuration: "30s", OnMaxDuration: "Rework" })
    expect(v11.MaxJobDuration).toBe("2h")
    expect(encodeRecipe(v11)).toMatchObject({ SchemaVersion: "1.1.0", MaxJobDuration: "2h" })

    const plain = { Steps: [{ Name: "A", Initial: true }], Transitions: [], Actions: [] }
    const v10 = Result.getOrThrow(validateWorkMasterRecipe({ ID: "wm", dataschema: RECIPE_SCHEMA_ID, data: plain })!)
    expect(v10).not.toHaveProperty("SchemaVersion")
    expect(recipeSchemaVersion(v10)).toBe("1.0.0")
    expect(encodeRecipe(v10)).toEqual({ Steps: [{ Name: "A", Initial: true }], Transitions: [], Actions: [] })
    // A bare recipe is v1.0.0 unless it says otherwise (or the caller names the version).
    expect(Result.getOrThrow(validateRecipe({ ...plain, SchemaVersion: "1.1.0" })).SchemaVersion).toBe("1.1.0")
    expect(Result.getOrThrow(validateRecipe(plain, "1.1.0")).SchemaVersion).toBe("1.1.0")
    expect(Result.getOrThrow(validateRecipe({ ...plain, SchemaVersion: "1.0.0" }))).not.toHaveProperty("SchemaVersion")
  })

  it("refuses a recipe whose SchemaVersion is not its work master's", () => {
    expect(problemsOf(validateWorkMasterRecipe({ dataschema: RECIPE_SCHEMA_ID, data: { ...limited, SchemaVersion: "1.1.0" } }))).toEqual([
      { rule: "structure", path: ["SchemaVersion"], message: 'SchemaVersion "1.1.0" is not the version the work master\'s dataschema names (1.0.0)' }
    ])
  })

  it("refuses every v1.1.0 construct in a v1.0.0 recipe, each named (rule needs-v1.1)", () => {
    const problems = problemsOf(validateWorkMasterRecipe({ dataschema: RECIPE_SCHEMA_ID, data: limited }))
    expect(problems.map((p) => [p.rule, p.path, p.message])).toEqual([
      ["needs-v1.1", ["MaxJobDuration"], "MaxJobDuration needs recipe schema v1.1.0"],
      ["needs-v1.1", ["Steps", 0, "MaxDuration"], 'step "Press": MaxDuration needs recipe schema v1.1.0'],
      ["needs-v1.1", ["Steps", 0, "OnMaxDuration"], 'step "Press": OnMaxDuration needs recipe schema v1.1.0']
    ])
  })
})

describe("time limit fields", () => {
  it("reads durations as whole numbers of ms, s, min or h", () => {
    expect(["250ms", "30s", "5min", "2h", "999999999h"].map((text) => Result.getOrThrow(parseDuration(text)))).toEqual([250, 30_000, 300_000, 7_200_000, 999_999_999 * 3_600_000])
    for (const bad of ["", "0s", "05s", "1.5s", "5 s", "5", "s", "5m", "5sec", "-1s", "1000000000h", " 5s"]) {
      expect(Result.isFailure(parseDuration(bad)), bad).toBe(true)
    }
    expect(Result.getOrUndefined(Result.flip(parseDuration("5 m")))).toBe('"5 m" is not a duration: a positive whole number and ms, s, min or h, no space ("250ms", "30s", "5min", "2h")')
  })

  it("lists every malformed duration as a structure problem, snake_case names accepted", () => {
    const { MaxJobDuration: _gone, ...rest } = limited
    const bad = { ...rest, Steps: [{ ...limited.Steps[0], MaxDuration: "30 s" }, ...limited.Steps.slice(1)], max_job_duration: "2 hours" }
    const problems = problemsOf(validateRecipe(bad, "1.1.0"))
    expect(problems.map((p) => [p.rule, p.path])).toEqual([
      ["structure", ["Steps", 0, "MaxDuration"]],
      ["structure", ["MaxJobDuration"]]
    ])
    expect(problems[0]!.message).toContain('Expected a duration: a positive whole number and ms, s, min or h, no space ("250ms", "30s", "5min", "2h"), actual "30 s"')
  })

  it("checks where OnMaxDuration leads: a MaxDuration to run out, a step or branch, never into a path", () => {
    const recipe = {
      Steps: [
        { Name: "A", Initial: true, OnMaxDuration: "B" },
        { Name: "B", MaxDuration: "1s", OnMaxDuration: "Nowhere" },
        { Name: "C", MaxDuration: "1s", OnMaxDuration: "P1" },
        { Name: "P1" }
      ],
      Transitions: [
        { Source: "A", Target: "B", Condition: "true" },
        { Source: "B", Target: "C", Condition: "true" },
        { Source: "C", Target: "Fork", Condition: "true" }
      ],
      Actions: [],
      Branches: [{ Name: "Fork", Type: "simultaneous", Branches: [["P1"]] }]
    }
    expect(problemsOf(validateRecipe(recipe, "1.1.0"))).toEqual([
      { rule: "time-limit", path: ["Steps", 0, "OnMaxDuration"], message: 'step "A": OnMaxDuration says where to go when MaxDuration runs out, but the step has no MaxDuration' },
      { rule: "unknown-reference", path: ["Steps", 1, "OnMaxDuration"], message: 'step "B": OnMaxDuration "Nowhere" is neither a step nor a branch' },
      { rule: "time-limit", path: ["Steps", 2, "OnMaxDuration"], message: 'step "C": OnMaxDuration enters "P1", a step of branch "Fork"; a path is entered through its branch' }
    ])
  })

  it("counts OnMaxDuration as a way into its target for reachability", () => {
    expect(Result.isSuccess(validateRecipe(limited, "1.1.0"))).toBe(true)
    expect([...reachableSteps(limited, ["Press"])].sort()).toEqual(["Done", "Press", "Rework"])
    const { OnMaxDuration: _gone, ...press } = limited.Steps[0]!
    expect(problemsOf(validateRecipe({ ...limited, Steps: [press, ...limited.Steps.slice(1)] }, "1.1.0"))).toEqual([
      { rule: "unreachable", path: ["Steps", 1], message: 'step "Rework" is not reachable from the initial step "Press"' }
    ])
  })
})

describe("the published v1.1.0 recipe JSON Schema", () => {
  const published = new URL("../../../docs/schemas/sfc-recipe/v1.1.0/schema.json", import.meta.url)
  const generated = recipeJsonSchema("1.1.0")
  const schemaAccepts = new Ajv2020({ strict: true, allErrors: true }).compile(generated)
  const decoderAccepts = (value: unknown) => Result.isSuccess(decodeRecipe(value))

  it("is the one generated from the model, under the v1.1.0 id; v1.0.0's is unchanged", () => {
    if (process.env["UPDATE_SCHEMAS"] !== undefined) writeFileSync(published, `${JSON.stringify(generated, null, 2)}\n`)
    expect(JSON.parse(readFileSync(published, "utf8"))).toEqual(generated)
    expect(generated).toMatchObject({ $id: RECIPE_SCHEMA_ID_V1_1, title: "SFC recipe v1.1.0" })
    expect(JSON.stringify(recipeJsonSchema())).not.toContain("MaxDuration")
  })

  it("agrees with the decoder on the time limit fields (seeded)", () => {
    const duration = fc.oneof(fc.constantFrom("30s", "250ms", "5min", "2h", "0s", "5 s", "1.5h", "", "10m"), fc.integer())
    const recipe = fc.record(
      {
        Steps: fc.array(fc.record({ Name: fc.constantFrom("A", "B"), MaxDuration: duration, OnMaxDuration: fc.constantFrom("A", "", 3) }, { requiredKeys: ["Name"] }), { maxLength: 2 }),
        Transitions: fc.constant([]),
        Actions: fc.constant([]),
        MaxJobDuration: duration
      },
      { requiredKeys: ["Steps", "Transitions", "Actions"] }
    )
    fc.assert(
      fc.property(recipe, (value) => {
        expect(schemaAccepts(value), JSON.stringify(value)).toBe(decoderAccepts(value))
      }),
      { seed: 1101, numRuns: 300 }
    )
  })
})
