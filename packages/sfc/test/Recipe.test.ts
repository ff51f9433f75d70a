import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { fixture } from "@microdcs/test-utils"
import {
  decodeRecipe,
  encodeRecipe,
  RECIPE_SCHEMA_ID,
  reachableSteps,
  type RecipeProblem,
  validateRecipe,
  validateWorkMasterRecipe
} from "@microdcs/sfc"

const workMaster = fixture("work-master-axle.json") as {
  dataschema: string
  data: Record<string, unknown>
}

const problemsOf = (result: Result.Result<unknown, ReadonlyArray<RecipeProblem>> | undefined): ReadonlyArray<RecipeProblem> => {
  if (result === undefined || Result.isSuccess(result)) throw new Error("expected problems")
  return result.failure
}

const snakeCase = (key: string) => key.replace(/(?<=[a-z0-9])([A-Z])/g, "_$1").toLowerCase()

/** Renames every field to snake_case, except inside Parameters (which are data, not recipe fields). */
const toSnakeCase = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(toSnakeCase)
    : typeof value === "object" && value !== null
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [snakeCase(k), k === "Parameters" ? v : toSnakeCase(v)]))
      : value

const allKeysPascalCase = (value: unknown): boolean =>
  Array.isArray(value)
    ? value.every(allKeysPascalCase)
    : typeof value === "object" && value !== null
      ? Object.entries(value).every(([k, v]) => /^[A-Z][A-Za-z]*$/.test(k) && (k === "Parameters" || allKeysPascalCase(v)))
      : true

const step = (Name: string, Initial = false) => ({ Name, Initial })
const action = (Name: string, Step: string, extra: Record<string, unknown> = {}) => ({
  Name,
  Step,
  Qualifier: "N",
  Interaction: "push_command",
  TypeId: `com.example.${Name}`,
  TimeoutSeconds: 10,
  ...extra
})

describe("recipe model", () => {
  it("validates the axle work master and round-trips it to PascalCase", () => {
    const recipe = Result.getOrThrow(validateWorkMasterRecipe(workMaster)!)
    expect(recipe.Steps.find((s) => s.Name === "QaCheck")).toEqual({ Name: "QaCheck", Initial: false })
    expect(recipe.Transitions[0]!.Priority).toBe(0)
    const json = encodeRecipe(recipe)
    expect(allKeysPascalCase(json)).toBe(true)
    // The fixture plus its defaults: what went in comes out, nothing else.
    const data = workMaster.data as { Steps: Array<object>; Transitions: Array<object> }
    expect(json).toEqual({
      ...data,
      Steps: data.Steps.map((s) => ({ Initial: false, ...s })),
      Transitions: data.Transitions.map((t) => ({ Priority: 0, ...t }))
    })
    expect(Result.getOrThrow(validateRecipe(JSON.parse(JSON.stringify(json))))).toEqual(recipe)
  })

  it("accepts snake_case field names and encodes them as PascalCase", () => {
    const snake = toSnakeCase(workMaster.data) as { actions: Array<Record<string, unknown>> }
    expect(snake.actions[0]).toMatchObject({ type_id: "com.example.station.position.v1", timeout_seconds: 30 })
    const recipe = Result.getOrThrow(validateRecipe(snake))
    expect(recipe).toEqual(Result.getOrThrow(validateRecipe(workMaster.data)))
    expect(allKeysPascalCase(encodeRecipe(recipe))).toBe(true)
  })

  it("keeps a recipe without branches without branches", () => {
    const input = { Steps: [step("A", true)], Transitions: [], Actions: [] }
    const recipe = Result.getOrThrow(validateRecipe(input))
    expect(encodeRecipe(recipe)).toEqual(input)
  })

  it("reports every shape problem at once, with paths, and never throws", () => {
    const problems = problemsOf(
      validateRecipe({
        steps: [{ name: "A", Name: "B" }],
        Transitions: 5,
        Actions: [{ Name: 1, Step: "A", Qualifier: "N", Interaction: "email", TimeoutSeconds: "10", Parameters: [1] }],
        Branches: [{ Name: "B", Type: "parallel", Branches: [[3]] }]
      })
    )
    expect(problems.every((p) => p.rule === "structure")).toBe(true)
    expect(problems.map((p) => p.message)).toEqual([
      "Steps[0]: Name is given twice (as name and Name)",
      "Transitions: Expected ReadonlyArray<Transition>, actual 5",
      "Actions[0].Name: Expected string, actual 1",
      "Actions[0].Interaction: Expected push_command or pull_event or recipe, actual \"email\"",
      "Actions[0].TypeId: is missing",
      "Actions[0].TimeoutSeconds: Expected number, actual \"10\"",
      "Actions[0].Parameters: Expected object, actual [1]",
      "Branches[0].Type: Expected simultaneous or selection, actual \"parallel\"",
      "Branches[0].Branches[0][0]: Expected string, actual 3"
    ])
    expect(problems[2]!.path).toEqual(["Actions", 0, "Name"])
    // A value without toString once made the message builder throw.
    const unprintable = { Steps: [], Transitions: [], Actions: [{ Qualifier: Object.create(null) }] }
    for (const input of [null, undefined, 7, "x", [], { Steps: "no" }, unprintable]) {
      expect(Result.isFailure(validateRecipe(input))).toBe(true)
      expect(Result.isFailure(decodeRecipe(input))).toBe(true)
    }
    expect(problemsOf(validateRecipe({ Steps: [], Transitions: [], Actions: [], Priority: 1.5 }))[0]!.rule).toBe("initial-step")
    const fractional = { Steps: [step("A", true)], Transitions: [{ Source: "A", Target: "A", Condition: "", Priority: 1.5 }], Actions: [] }
    expect(problemsOf(validateRecipe(fractional))[0]!.message).toBe("Transitions[0].Priority: Expected an integer, actual 1.5")
  })

  it("a shape problem does not hide the element rules: the elements that decode on their own are checked too", () => {
    // A missing Actions once hid the condition that does not parse.
    const problems = problemsOf(
      validateRecipe({
        Steps: [step("A", true), step("B")],
        transitions: [
          { Source: "A", Target: "B", Condition: "x >" },
          { Source: "B", Target: "A" },
          { Source: "B", Target: "A", Condition: "counter.9lives < 3" }
        ],
        Branches: [{ Name: "Br", Type: "simultaneous", Branches: [] }]
      })
    )
    expect(problems.map((p) => [p.rule, p.path])).toEqual([
      ["structure", ["Transitions", 1, "Condition"]],
      ["structure", ["Actions"]],
      ["condition", ["Transitions", 0, "Condition"]],
      ["counter", ["Transitions", 2, "Condition"]]
    ])
    expect(problems[2]!.message).toMatch(/^transition 0 \("A" → "B"\): condition "x >" does not parse/)
    // Actions that decode alone are checked by the action rules even when the steps are malformed.
    const actions = problemsOf(
      validateRecipe({ Steps: 3, Transitions: [], Actions: [action("a", "A", { Qualifier: "X" }), action("b", "A", { TimeoutSeconds: -1 }), { Name: 2 }] })
    )
    expect(actions.filter((p) => p.rule !== "structure").map((p) => [p.rule, p.path])).toEqual([
      ["timeout", ["Actions", 1, "TimeoutSeconds"]],
      ["qualifier", ["Actions", 0, "Qualifier"]]
    ])
  })

  it("rejects a recipe with every kind of rule problem, naming the elements in each", () => {
    // v1.1.0's qualifiers in a v1.0.0 recipe: each needs v1.1.0; X is no qualifier at all.
    const qualifiers = ["S", "R", "L", "D", "SD", "DS", "SL", "P1", "P0", "X"]
    const recipe = {
      Steps: [step("Start", true), step("Other", true), step("Dup"), step("P1"), step("P2"), step("Island"), step("Shared")],
      Branches: [
        { Name: "Fork", Type: "simultaneous", Branches: [["P1", "P2", "Shared"], [], ["Fork"]] },
        { Name: "Split", Type: "selection", Branches: [["Shared", "Ghost"]] },
        { Name: "Empty", Type: "selection", Branches: [] }
      ],
      Transitions: [
        { Source: "Start", Target: "Fork", Condition: "true" },
        { Source: "Fork", Target: "Nowhere", Condition: "a &&" },
        { Source: "Other", Target: "Dup", Condition: "x = 1" },
        { Source: "Dup", Target: "Split", Condition: "" },
        { Source: "P1", Target: "Dup", Condition: "" },
        { Source: "Dup", Target: "P2", Condition: "" }
      ],
      Actions: [
        action("Dup", "Start"),
        action("lost", "Missing"),
        action("onBranch", "Fork"),
        action("zero", "P1", { TimeoutSeconds: 0 }),
        action("negative", "P2", { TimeoutSeconds: -5 }),
        ...qualifiers.map((q) => action(`q${q}`, "Start", { Qualifier: q }))
      ]
    }
    const problems = problemsOf(validateRecipe(recipe))
    const byRule = (rule: RecipeProblem["rule"]) => problems.filter((p) => p.rule === rule).map((p) => p.message)

    expect(byRule("duplicate-name")).toEqual(['name "Dup" is used 2 times: by step Steps[2], action Actions[0]'])
    expect(byRule("initial-step")).toEqual(['steps "Start", "Other" are all initial; exactly one may be'])
    expect(byRule("unknown-reference")).toEqual([
      'transition 1 ("Fork" → "Nowhere"): target "Nowhere" is neither a step nor a branch',
      'action "lost": step "Missing" does not exist',
      'action "onBranch": "Fork" is a branch; actions belong to steps'
    ])
    expect(byRule("branch-path")).toEqual([
      'branch "Fork": path 1 is empty',
      'branch "Fork" path 2 lists branch "Fork"; paths hold steps only',
      'step "Shared" is in two paths: branch "Fork" path 0 and branch "Split" path 0',
      'branch "Split" path 0 lists "Ghost", which is not a step',
      'branch "Empty" has no paths',
      'transition 4 ("P1" → "Dup") leaves "P1", a step of branch "Fork"; path steps advance in list order and the branch is left by transitions from "Fork"',
      'transition 5 ("Dup" → "P2") enters "P2", a step of branch "Fork"; a path is entered through its branch'
    ])
    expect(byRule("timeout")).toEqual([
      'action "zero": TimeoutSeconds must be greater than 0, not 0',
      'action "negative": TimeoutSeconds must be greater than 0, not -5'
    ])
    expect(byRule("condition")).toEqual([
      'transition 1 ("Fork" → "Nowhere"): condition "a &&" does not parse at position 4: ' +
        "expected a name, a literal or '(' but found the end of the condition",
      'transition 2 ("Other" → "Dup"): condition "x = 1" does not parse at position 2: unexpected character "=" (use \'==\')'
    ])
    expect(byRule("qualifier")).toEqual([
      'action "qX": qualifier "X" is not an IEC 61131-3 qualifier this engine runs; use N, P, P1, P0, S, R, L, SL, D, SD or DS (all but N and P need recipe schema v1.1.0)'
    ])
    const needs = byRule("needs-v1.1")
    expect(needs).toHaveLength(qualifiers.length - 1)
    qualifiers.slice(0, -1).forEach((q, i) => expect(needs[i]).toMatch(new RegExp(`^action "q${q}": qualifier ${q} \\(.+\\) needs recipe schema v1.1.0$`)))
    expect(needs[0]).toBe('action "qS": qualifier S (stored) needs recipe schema v1.1.0')
    expect(byRule("unreachable")).toEqual(['step "Island" is not reachable from any of the initial steps "Start", "Other"'])

    expect(new Set(problems.map((p) => p.rule))).toEqual(
      new Set(["duplicate-name", "initial-step", "unknown-reference", "branch-path", "timeout", "condition", "qualifier", "needs-v1.1", "unreachable"])
    )
    expect(problems).toHaveLength(1 + 1 + 3 + 7 + 2 + 2 + qualifiers.length + 1)
    expect(problems.find((p) => p.rule === "timeout")!.path).toEqual(["Actions", 3, "TimeoutSeconds"])
    expect(problems.find((p) => p.rule === "condition")!.path).toEqual(["Transitions", 1, "Condition"])
  })

  it("needs an initial step, and reports none when there is none", () => {
    const problems = problemsOf(validateRecipe({ Steps: [step("A")], Transitions: [], Actions: [] }))
    expect(problems).toEqual([{ rule: "initial-step", path: ["Steps"], message: "no step is initial; exactly one step needs Initial: true" }])
  })

  it("reaches steps through loops, both kinds of branch and a branch's exit", () => {
    const recipe = {
      Steps: [step("Init", true), step("A"), step("B"), step("C"), step("After"), step("Loop"), step("Unused")],
      Branches: [{ Name: "Choose", Type: "selection", Branches: [["A", "B"], ["C"]] }],
      Transitions: [
        { Source: "Init", Target: "Choose", Condition: "go" },
        { Source: "Choose", Target: "C", Condition: "pick_c", Priority: 0 },
        { Source: "Choose", Target: "After", Condition: "" },
        { Source: "After", Target: "Loop", Condition: "again" },
        { Source: "Loop", Target: "After", Condition: "always" }
      ],
      Actions: []
    }
    expect([...reachableSteps(recipe, ["Init"])].sort()).toEqual(["A", "After", "B", "C", "Init", "Loop"])
    expect(problemsOf(validateRecipe(recipe))).toEqual([
      { rule: "unreachable", path: ["Steps", 6], message: 'step "Unused" is not reachable from the initial step "Init"' }
    ])
  })

  it("finds the recipe in a work master only under the recipe schema", () => {
    expect(RECIPE_SCHEMA_ID).toBe("https://aschamberger.github.io/schemas/microdcs/sfc-recipe/v1.0.0/")
    expect(validateWorkMasterRecipe({ ...workMaster, dataschema: "https://example.com/other" })).toBeUndefined()
    expect(validateWorkMasterRecipe({ ID: "wm" })).toBeUndefined()
    expect(validateWorkMasterRecipe(null)).toBeUndefined()
    expect(problemsOf(validateWorkMasterRecipe({ dataschema: RECIPE_SCHEMA_ID }))[0]!.message).toContain("no data")
    expect(problemsOf(validateWorkMasterRecipe({ dataschema: RECIPE_SCHEMA_ID, data: { Steps: [] } }))[0]!.rule).toBe("structure")
  })

  it("never throws, whatever it is given", () => {
    const recipeLike = fc.record({
      Steps: fc.array(fc.record({ Name: fc.constantFrom("A", "B", ""), Initial: fc.anything() }, { requiredKeys: [] })),
      Transitions: fc.array(fc.dictionary(fc.constantFrom("Source", "target", "Condition", "priority"), fc.oneof(fc.string(), fc.integer()))),
      Actions: fc.array(fc.dictionary(fc.constantFrom("Name", "step", "Qualifier", "timeout_seconds", "Parameters"), fc.anything())),
      Branches: fc.anything()
    }, { requiredKeys: [] })
    fc.assert(
      fc.property(fc.oneof(fc.anything(), recipeLike), (input) => {
        const result = validateRecipe(input)
        if (Result.isFailure(result)) expect(result.failure.length).toBeGreaterThan(0)
        decodeRecipe(input)
        validateWorkMasterRecipe({ dataschema: RECIPE_SCHEMA_ID, data: input })
      }),
      { numRuns: 500 }
    )
  })
})
