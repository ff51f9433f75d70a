import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { jobOrderFields, type RecipeProblem, validateRecipe } from "@microdcs/sfc"
import { recipeBuilders } from "@microdcs/sfc/testing"

/** Recipe schema v1.1.0's conditions in validation: the version gate and the names a condition reads. */

const { stepJson, transition, push } = recipeBuilders("")

const problemsOf = (input: unknown): ReadonlyArray<RecipeProblem> => {
  const result = validateRecipe(input)
  if (Result.isSuccess(result)) throw new Error("expected problems")
  return result.failure
}
const accepted = (input: unknown) => {
  const result = validateRecipe(input)
  if (Result.isFailure(result)) throw new Error(result.failure.map((p) => p.message).join("\n"))
  return result.success
}

/** Press (tighten, verify) → Check (qa) → Done, the conditions given for Press → Check. */
const recipe = (condition: string, version: "1.0.0" | "1.1.0" | "none" = "1.1.0", extra: Record<string, unknown> = {}) => ({
  Steps: [stepJson("Press", true), stepJson("Check"), stepJson("Done")],
  Transitions: [transition("Press", "Check", condition), transition("Check", "Done")],
  Actions: [push("tighten", "Press"), push("verify", "Press", { Results: ["ok", "torque"] }), push("qa", "Check")],
  ...(version === "none" ? {} : { SchemaVersion: version }),
  ...extra
})
const withoutResults = (r: ReturnType<typeof recipe>) => ({ ...r, Actions: r.Actions.map(({ Results: _r, ...a }: Record<string, unknown>) => a) })

describe("recipe schema v1.0.0: the new constructs are refused", () => {
  it("names every construct of every condition, and Results on an action", () => {
    const input = withoutResults(recipe("Press.X && Check.T > 5s", "1.0.0"))
    input.Transitions.push(transition("Check", "Press", 'order.Priority * 2 > -verify.n || "a-b".ok'))
    input.Actions.push(push("qa2", "Check", { Results: ["ok"] }))
    const problems = problemsOf(input)
    expect(problems.every((p) => p.rule === "needs-v1.1")).toBe(true)
    expect(problems.map((p) => p.message)).toEqual([
      'transition 0 ("Press" → "Check"): the step flag Press.X (at character 0) needs recipe schema v1.1.0',
      'transition 0 ("Press" → "Check"): the step time Check.T (at character 11) needs recipe schema v1.1.0',
      'transition 0 ("Press" → "Check"): the duration 5s (at character 21) needs recipe schema v1.1.0',
      'transition 2 ("Check" → "Press"): the job order field order.Priority (at character 0) needs recipe schema v1.1.0',
      "transition 2 (\"Check\" → \"Press\"): the operator '*' (at character 15) needs recipe schema v1.1.0",
      "transition 2 (\"Check\" → \"Press\"): the unary operator '-' (at character 21) needs recipe schema v1.1.0",
      'transition 2 ("Check" → "Press"): the quoted name "a-b" (at character 34) needs recipe schema v1.1.0',
      'action "qa2": Results needs recipe schema v1.1.0'
    ])
    expect(problems.map((p) => p.path)).toEqual([
      ...Array(3).fill(["Transitions", 0, "Condition"]),
      ...Array(4).fill(["Transitions", 2, "Condition"]),
      ["Actions", 3, "Results"]
    ])
  })

  it("treats a recipe that names no version as v1.0.0, and checks no names there (as before)", () => {
    expect(problemsOf(withoutResults(recipe("Press.T > 1", "none"))).map((p) => p.rule)).toEqual(["needs-v1.1"])
    accepted(withoutResults(recipe("verfy.ok && x > -1 && counter.nok < 3 && Press.ok", "1.0.0")))
  })
})

describe("recipe schema v1.1.0: every name a condition reads must be one something supplies", () => {
  it("accepts the new constructs and names that exist", () => {
    const ok = recipe('Press.X && Press.T > 5s && order.JobOrderParameters.0.Value == "x" && verify.ok && torque * 2 > counter.nok && tighten.anything && "verify".torque')
    expect(accepted(ok).SchemaVersion).toBe("1.1.0")
  })

  it("refuses an action field of an action the transition does not read: the verfy.ok typo, with the candidates", () => {
    const [problem, ...rest] = problemsOf(recipe("verfy.ok"))
    expect(rest).toEqual([])
    expect(problem).toMatchObject({ rule: "condition-name", path: ["Transitions", 0, "Condition"] })
    expect(problem!.candidates).toEqual([
      "tighten.<field>",
      "verify.ok",
      "verify.torque",
      "Press.X",
      "Press.T",
      "Check.X",
      "Check.T",
      "Done.X",
      "Done.T",
      ...jobOrderFields.map((f) => `order.${f}`),
      "counter.<name>"
    ])
    expect(problem!.message).toBe(
      `transition 0 ("Press" → "Check"): verfy.ok: there is no action "verfy"; it can read ${problem!.candidates!.join(", ")}`
    )
  })

  it("says why each kind of name is refused", () => {
    const input = recipe("qa.ok || Check.ok || B.X || verify.tork || Press.X")
    const messages = problemsOf(input).map((p) => p.message.replace(/; it can read .*/, ""))
    expect(messages).toEqual([
      'transition 0 ("Press" → "Check"): qa.ok: action "qa" belongs to step "Check", not to the actions of step "Press"',
      'transition 0 ("Press" → "Check"): Check.ok: "Check" is a step: read Check.X (active) or Check.T (time active)',
      'transition 0 ("Press" → "Check"): B.X: there is no action "B"',
      'transition 0 ("Press" → "Check"): verify.tork: action "verify" declares no result "tork"'
    ])
  })

  it("checks bare names against declared results only when every action the transition reads declares them", () => {
    // tighten declares nothing: a bare name may come from it.
    accepted(recipe("tork_ok"))
    const declared = recipe("tork_ok || ok || torque")
    declared.Actions[0] = push("tighten", "Press", { Results: ["torque_ok"] })
    const [problem, ...rest] = problemsOf(declared)
    expect(rest).toEqual([])
    expect(problem!.message).toMatch(/^transition 0 \("Press" → "Check"\): tork_ok: none of the actions of step "Press" declares a result "tork_ok"; it can read torque_ok, ok, torque, tighten.torque_ok, verify.ok, verify.torque, Press.X/)
    accepted(recipe("true", "1.1.0", { Transitions: [transition("Press", "Check"), transition("Check", "Done", "ok")] }))
    // A step without actions supplies no result at all.
    const empty = recipe("true")
    empty.Transitions[1] = transition("Check", "Done", "qa_ok")
    empty.Actions = empty.Actions.filter((a) => a.Step !== "Check")
    expect(problemsOf(empty).map((p) => p.message.replace(/; it can read .*/, ""))).toEqual([
      'transition 1 ("Check" → "Done"): qa_ok: nothing supplies it: step "Check" has no actions'
    ])
  })

  it("checks the first segment of a job order field against the ISA-95 job order", () => {
    accepted(recipe("order.Priority > 1 && order.WorkMasterID.0.ID == 'w' && order.MaterialRequirements.0.Anything"))
    const [problem] = problemsOf(recipe("order.Prio > 1 && order.Priority.x"))
    expect(problem!.message).toBe(
      `transition 0 ("Press" → "Check"): order.Prio: a job order has no field "Prio"; it can read ${jobOrderFields.map((f) => `order.${f}`).join(", ")}`
    )
    expect(problem!.candidates).toHaveLength(jobOrderFields.length)
  })

  it("lists every problem of every transition once", () => {
    const input = recipe("verfy.ok || verfy.ok || order.X")
    input.Transitions[1] = transition("Check", "Done", "tighten.ok")
    expect(problemsOf(input).map((p) => [p.path[1], p.message.split(":")[1]])).toEqual([
      [0, " verfy.ok"],
      [0, " order.X"],
      [1, " tighten.ok"]
    ])
  })
})

describe("recipe schema v1.1.0: what a transition out of a branch reads", () => {
  // Start (prep) → B: [Left (left)] [Right (right)] → End (final); End loops nowhere.
  const branched = (type: "simultaneous" | "selection", conditions: Record<string, string>) => ({
    Steps: [stepJson("Start", true), stepJson("Left"), stepJson("Right"), stepJson("End")],
    Branches: [{ Name: "B", Type: type, Branches: [["Left"], ["Right"]] }],
    Transitions: [
      transition("Start", "B"),
      ...(type === "selection" ? [transition("B", "Left", conditions["choose"] ?? "true"), transition("B", "Right")] : []),
      transition("B", "End", conditions["leave"] ?? "true")
    ],
    Actions: [push("prep", "Start"), push("left", "Left"), push("right", "Right"), push("final", "End")],
    SchemaVersion: "1.1.0"
  })
  const names = (input: unknown) => problemsOf(input).map((p) => p.message.replace(/; it can read .*/, "").replace(/^[^:]*: /, ""))

  it("leaving: the actions of the paths' steps and of every step before the branch", () => {
    accepted(branched("simultaneous", { leave: "left.ok && right.ok && prep.ok" }))
    expect(names(branched("simultaneous", { leave: "final.ok" }))).toEqual([
      'final.ok: action "final" belongs to step "End", not to the actions that can have run when branch "B" converges'
    ])
  })

  it("choosing a selection path: the actions the transition into the branch read", () => {
    accepted(branched("selection", { choose: "prep.ok" }))
    expect(names(branched("selection", { choose: "left.ok" }))).toEqual([
      'left.ok: action "left" belongs to step "Left", not to the actions read by the transitions into branch "B"'
    ])
  })
})

describe("validation of conditions never throws", () => {
  it("on any condition text in either version, and names only its own rules", () => {
    const pieces = ["Press", "Check", "verify", "tighten", "qa", "order", "counter", ".", "X", "T", "ok", "0", "5s", "+", "-", "*", "/", "&&", "||", "!", "==", ">", "(", ")", " ", '"a-b"', "'", "Results"]
    const condition = fc.array(fc.constantFrom(...pieces), { maxLength: 12 }).map((parts) => parts.join(""))
    const rules = new Set(["condition", "counter", "needs-v1.1", "condition-name"])
    fc.assert(
      fc.property(condition, fc.constantFrom("1.0.0" as const, "1.1.0" as const), (text, version) => {
        const result = validateRecipe(recipe(text, version))
        if (Result.isFailure(result)) for (const p of result.failure) expect(rules.has(p.rule), p.message).toBe(true)
      }),
      { numRuns: 500 }
    )
  })
})
