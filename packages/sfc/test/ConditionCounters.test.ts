import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import {
  actionField,
  compare,
  type ConditionAst,
  counterRef,
  countersBySource,
  countersIn,
  countersOf,
  evaluateCondition,
  isCounterName,
  literal,
  logical,
  name,
  not,
  parseCondition,
  printCondition,
  tryEvaluateCondition,
  validateRecipe
} from "@microdcs/sfc"

/** `counter.<name>` in conditions: the language side and recipe validation. */

const parse = (text: string): ConditionAst => {
  const parsed = parseCondition(text)
  if (Result.isFailure(parsed)) throw new Error(`does not parse: ${text}: ${parsed.failure.message}`)
  return parsed.success
}

describe("counter operands: parse and print", () => {
  it("reads counter.<name> as a counter, also without spaces and inside larger conditions", () => {
    expect(parse("counter.nok_torque_1h < 3")).toEqual(compare("<", counterRef("nok_torque_1h"), literal(3)))
    expect(parse("counter.nok<3")).toEqual(compare("<", counterRef("nok"), literal(3)))
    // Journal counter names may hold '.' and '-': the name runs to the first other character.
    expect(parse("counter.torque.nok-1h >= 2")).toEqual(compare(">=", counterRef("torque.nok-1h"), literal(2)))
    expect(parse("ok && !(counter.a == 0) || verify.ok")).toEqual(
      logical("||", logical("&&", name("ok"), not(compare("==", counterRef("a"), literal(0)))), actionField("verify", "ok"))
    )
    // A bare `counter` is still a field name.
    expect(parse("counter > 1")).toEqual(compare(">", name("counter"), literal(1)))
  })

  it("prints what it parses", () => {
    for (const text of ["counter.nok_torque_1h < 3", "counter.a.b-c >= -1", "!counter.x", "counter.a == counter.b && ok"]) {
      expect(printCondition(parse(text))).toBe(text)
      expect(parse(printCondition(parse(text)))).toEqual(parse(text))
    }
  })

  it("round-trips random conditions with counters", () => {
    const counterName = fc.constantFrom("nok_1h", "a", "torque.nok-1h", "X9")
    const { ast } = fc.letrec<{ ast: ConditionAst }>((tie) => ({
      ast: fc.oneof(
        { depthSize: "small", maxDepth: 8, withCrossShrink: true },
        fc.integer({ min: -5, max: 5 }).map(literal),
        counterName.map(counterRef),
        fc.constantFrom("ok", "n").map(name),
        tie("ast").map(not),
        fc.tuple(fc.constantFrom("&&" as const, "||" as const), tie("ast"), tie("ast")).map(([op, l, r]) => logical(op, l, r)),
        fc.tuple(fc.constantFrom("<" as const, ">=" as const, "==" as const), tie("ast"), tie("ast")).map(([op, l, r]) => compare(op, l, r))
      )
    }))
    fc.assert(
      fc.property(ast, (tree) => {
        expect(parseCondition(printCondition(tree))).toEqual(Result.succeed(tree))
      })
    )
  })

  it("refuses a counter without a name, or spaced out, with the position", () => {
    const bad = (text: string) => {
      const parsed = parseCondition(text)
      if (Result.isSuccess(parsed)) throw new Error(`parsed: ${text}`)
      return parsed.failure
    }
    expect(bad("counter. < 3")).toMatchObject({ _tag: "ConditionError", position: 8, message: expect.stringContaining("counter name") })
    expect(bad("counter.")).toMatchObject({ position: 8 })
    expect(bad("counter . x < 3")).toMatchObject({ position: 8, message: expect.stringContaining("without spaces") })
    expect(bad("counter.x < ")).toMatchObject({ _tag: "ConditionError" })
  })

  it("lists the counters a condition names, once each, in order", () => {
    expect(countersIn(parse("counter.b > 1 || counter.a < 2 && counter.b != 0"))).toEqual(["b", "a"])
    expect(countersIn(parse("ok && verify.done"))).toEqual([])
  })

  it("knows the journal's counter names", () => {
    for (const good of ["nok_torque_1h", "a", "torque.nok-1h", "A" + "b".repeat(63)]) expect(isCounterName(good)).toBe(true)
    for (const bad of ["1h", "_x", "-a", ".a", "", "A" + "b".repeat(64)]) expect(isCounterName(bad)).toBe(false)
  })
})

describe("counter operands: evaluation", () => {
  const results = [{ action: "tighten", result: { tool: "nr-3", ok: true } }]
  const holds = (text: string, counters?: Record<string, number>) => tryEvaluateCondition(parse(text), { results, counters })

  it("compares the counter's value from the scope", () => {
    expect(holds("counter.nok_1h < 3", { nok_1h: 2 })).toEqual(Result.succeed(true))
    expect(holds("counter.nok_1h < 3", { nok_1h: 3 })).toEqual(Result.succeed(false))
    expect(holds("ok && counter.nok_1h >= 3", { nok_1h: 3 })).toEqual(Result.succeed(true))
    expect(holds("!counter.nok_1h", { nok_1h: 0 })).toEqual(Result.succeed(true))
  })

  it("a counter without a value is an error naming it, not false", () => {
    const missing = holds("counter.nok_1h < 3", { other: 1 })
    expect(missing).toEqual(Result.fail(expect.objectContaining({ _tag: "ConditionEvaluationError", counter: "nok_1h" })))
    expect(Result.isFailure(missing) && missing.failure.message).toContain("counter nok_1h has no value")
    expect(holds("counter.nok_1h < 3")).toEqual(Result.fail(expect.objectContaining({ counter: "nok_1h", message: expect.stringContaining("no counter source") })))
    // An own property only: `constructor` is not a counter value of every object.
    expect(Result.isFailure(holds("counter.constructor > 0", {}))).toBe(true)
  })

  it("needs no counter behind an operand that already decided", () => {
    expect(holds("!ok && counter.nok_1h < 3", {})).toEqual(Result.succeed(false))
    expect(holds("ok || counter.nok_1h < 3", {})).toEqual(Result.succeed(true))
  })

  it("conditions without counters evaluate as before", () => {
    expect(holds('tighten.tool == "nr-3"')).toEqual(Result.succeed(true))
    expect(evaluateCondition(parse("counter.x < 3"), { results })).toBe(false)
  })
})

describe("counter operands: recipes", () => {
  const recipe = (conditions: ReadonlyArray<[string, string, string]>, actions: ReadonlyArray<string> = ["tighten"]) => ({
    Steps: [{ Name: "Tighten", Initial: true }, { Name: "Pack" }, { Name: "Inspect" }],
    Transitions: conditions.map(([Source, Target, Condition]) => ({ Source, Target, Condition })),
    Actions: actions.map((Name) => ({ Name, Step: "Tighten", Qualifier: "N", Interaction: "push_command", TypeId: "t", TimeoutSeconds: 5 }))
  })

  it("accepts a recipe with well-formed counters and lists them per source", () => {
    const json = recipe([
      ["Tighten", "Pack", "counter.nok_1h < 3"],
      ["Tighten", "Inspect", "counter.nok_1h >= 3 || counter.nok_1d > 10"],
      ["Inspect", "Pack", "true"]
    ])
    const checked = validateRecipe(json)
    expect(Result.isSuccess(checked)).toBe(true)
    const valid = Result.getOrThrow(checked)
    expect(countersOf(valid)).toEqual(["nok_1h", "nok_1d"])
    expect([...countersBySource(valid)]).toEqual([["Tighten", ["nok_1h", "nok_1d"]]])
    expect(countersBySource(recipe([["Tighten", "Pack", "ok"], ["Pack", "Inspect", "true"]])).size).toBe(0)
  })

  it("lists every malformed counter name as a problem, and changes nothing else", () => {
    const json = recipe([
      ["Tighten", "Pack", "counter.1h < 3"],
      ["Tighten", "Inspect", "counter._x > 0 && counter.ok_1h < 2"],
      ["Inspect", "Pack", `counter.${"a".repeat(65)} == 0`]
    ])
    const before = JSON.stringify(json)
    const checked = validateRecipe(json)
    expect(JSON.stringify(json)).toBe(before)
    if (Result.isSuccess(checked)) throw new Error("accepted")
    const counters = checked.failure.filter((p) => p.rule === "counter")
    expect(counters.map((p) => p.path)).toEqual([["Transitions", 0, "Condition"], ["Transitions", 1, "Condition"], ["Transitions", 2, "Condition"]])
    expect(counters[0]!.message).toContain("counter.1h is not a counter name")
    expect(counters[1]!.message).toContain("counter._x")
  })

  it("a counter without a name is a condition problem", () => {
    const checked = validateRecipe(recipe([["Tighten", "Pack", "counter. < 3"], ["Pack", "Inspect", "true"]]))
    expect(Result.isFailure(checked) && checked.failure.map((p) => p.rule)).toEqual(["condition"])
  })

  it("an action called counter is a problem once conditions read counters", () => {
    const shadowing = validateRecipe(recipe([["Tighten", "Pack", "counter.ok < 1"], ["Pack", "Inspect", "true"]], ["counter"]))
    expect(Result.isFailure(shadowing) && shadowing.failure).toEqual([
      expect.objectContaining({ rule: "counter", path: ["Actions", 0, "Name"], message: expect.stringContaining('action "counter"') })
    ])
    expect(Result.isSuccess(validateRecipe(recipe([["Tighten", "Pack", "ok"], ["Pack", "Inspect", "true"]], ["counter"])))).toBe(true)
  })
})
