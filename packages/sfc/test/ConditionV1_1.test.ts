import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import {
  actionField,
  analyzeCondition,
  arithmetic,
  compare,
  type ConditionAst,
  type ConditionScope,
  conditionReads,
  counterRef,
  evaluateValue,
  literal,
  logical,
  maxConditionLength,
  maxConditionNesting,
  name,
  not,
  orderField,
  parseCondition,
  printCondition,
  stepFlag,
  stepTimeThresholds,
  tryEvaluateCondition
} from "@microdcs/sfc"

/** The constructs recipe schema v1.1.0 adds to the condition language. */

const steps = ["Press", "Dry", "order", "counter", "step-2"]
const parse = (text: string): ConditionAst => Result.getOrThrow(parseCondition(text, { steps }))
const failure = (text: string) => {
  const result = parseCondition(text, { steps })
  if (Result.isSuccess(result)) throw new Error(`expected ${JSON.stringify(text)} not to parse`)
  return { message: result.failure.message, position: result.failure.position }
}
const newSyntax = (text: string) => Result.getOrThrow(analyzeCondition(text, { steps })).newSyntax
const value = (text: string, scope: Partial<ConditionScope> = {}) => evaluateValue(parse(text), { results: [], ...scope })

describe("step flags: Step.X and Step.T", () => {
  it("reads X and T after a step's name as step flags, after any other name as fields", () => {
    expect(parse("Press.X")).toEqual(stepFlag("Press", "X"))
    expect(parse("Press.T > 5s")).toEqual(compare(">", stepFlag("Press", "T"), literal(5000)))
    expect(parse('"step-2".X')).toEqual(stepFlag("step-2", "X"))
    expect(parse('Press."T"')).toEqual(stepFlag("Press", "T"))
    expect(parse("verify.X")).toEqual(actionField("verify", "X"))
    expect(parse("Press.ok")).toEqual(actionField("Press", "ok"))
    // Without the recipe's steps nothing is a step.
    expect(Result.getOrThrow(parseCondition("Press.X"))).toEqual(actionField("Press", "X"))
  })

  it("evaluates X as whether the step is active and T as its time, missing without a step clock", () => {
    const clock = { isActive: (step: string) => step === "Press", elapsedMs: (step: string) => (step === "Press" ? 6000 : 0) }
    expect(value("Press.X && !Dry.X", { steps: clock })).toBe(true)
    expect(value("Press.T > 5s && Dry.T == 0", { steps: clock })).toBe(true)
    expect(value("Press.T", { steps: clock })).toBe(6000)
    expect(value("Press.X")).toBeUndefined()
    expect(value("Press.T >= 0 || Press.T < 0")).toBe(false)
  })
})

describe("duration literals", () => {
  it("reads ms, s, min and h as milliseconds", () => {
    expect(["250ms", "5s", "2min", "1h", "1.5s", "0s", "1e3ms"].map((text) => parse(text))).toEqual(
      [250, 5000, 120_000, 3_600_000, 1500, 0, 1000].map(literal)
    )
    expect(parse("-5s")).toEqual(literal(-5000))
  })

  it("refuses an unknown unit and a duration out of range, with the position", () => {
    expect(failure("Press.T > 5sec")).toEqual({ position: 11, message: "unknown duration unit 'sec' (use ms, s, min, h)" })
    expect(failure("5m")).toEqual({ position: 1, message: "unknown duration unit 'm' (use ms, s, min, h)" })
    expect(failure("1e305h")).toEqual({ position: 0, message: "duration out of range" })
    // A space makes it a number and a name.
    expect(failure("5 s")).toEqual({ position: 2, message: "unexpected 's'" })
  })
})

describe("job order fields: order.<path>", () => {
  const order = {
    JobOrderID: "J1",
    Priority: 3,
    JobOrderParameters: [{ ID: "speed", Value: 12 }, { ID: "mode", Value: "fast" }],
    "Odd-Key": { x: true }
  }

  it("reads paths of words, indexes and quoted names", () => {
    expect(parse("order.Priority")).toEqual(orderField(["Priority"]))
    expect(parse("order.JobOrderParameters.0.Value")).toEqual(orderField(["JobOrderParameters", "0", "Value"]))
    expect(parse('order."Odd-Key".x')).toEqual(orderField(["Odd-Key", "x"]))
    expect(parse("order.A.1.2")).toEqual(orderField(["A", "1", "2"]))
    // Quoted, `order` is a name like any other.
    expect(parse('"order".Priority')).toEqual(actionField("order", "Priority"))
    expect(parse('"order".X')).toEqual(stepFlag("order", "X"))
    expect(parse("order")).toEqual(name("order"))
  })

  it("evaluates own properties and array indexes only; anything missing is missing", () => {
    expect(value("order.Priority > 2 && order.JobOrderID == 'J1'", { order })).toBe(true)
    expect(value("order.JobOrderParameters.1.Value", { order })).toBe("fast")
    expect(value('order."Odd-Key".x', { order })).toBe(true)
    for (const text of ["order.Missing", "order.JobOrderParameters.2.Value", "order.JobOrderParameters.length", "order.JobOrderParameters.01", "order.Priority.x", "order.constructor", "order.__proto__"]) {
      expect(value(text, { order }), text).toBeUndefined()
    }
    expect(value("order.Priority")).toBeUndefined()
    expect(value("order.Priority", { order: "not an object" })).toBeUndefined()
  })

  it("refuses a missing or bad segment", () => {
    expect(failure("order.")).toEqual({ position: 6, message: "expected a job order field after 'order.' but found the end of the condition" })
    expect(failure("order.A.(")).toEqual({ position: 8, message: "expected a job order field after 'order.A.' but found '('" })
  })
})

describe("arithmetic", () => {
  it("binds * and / tighter than + and -, both tighter than comparisons, all to the left", () => {
    expect(parse("a + b * c")).toEqual(arithmetic("+", name("a"), arithmetic("*", name("b"), name("c"))))
    expect(parse("a - b - c")).toEqual(arithmetic("-", arithmetic("-", name("a"), name("b")), name("c")))
    expect(parse("a / b * c")).toEqual(arithmetic("*", arithmetic("/", name("a"), name("b")), name("c")))
    expect(parse("(a + b) * c")).toEqual(arithmetic("*", arithmetic("+", name("a"), name("b")), name("c")))
    expect(parse("x.n + 1 > counter.c * 2 && ok")).toEqual(
      logical("&&", compare(">", arithmetic("+", actionField("x", "n"), literal(1)), arithmetic("*", counterRef("c"), literal(2))), name("ok"))
    )
    expect(parse("a-1")).toEqual(arithmetic("-", name("a"), literal(1)))
    expect(parse("a - -1")).toEqual(arithmetic("-", name("a"), literal(-1)))
    expect(parse("-a")).toEqual(arithmetic("-", literal(0), name("a")))
    expect(parse("- -2")).toEqual(literal(2))
    expect(parse("!a + 1")).toEqual(arithmetic("+", not(name("a")), literal(1)))
  })

  it("computes with numbers only; anything else, a division by zero or an overflow is missing", () => {
    const results = [{ action: "m", result: { n: 6, s: "6", b: true, z: 0, big: 1e308 } }]
    expect(value("n + 4 * 2 - 10 / 5", { results })).toBe(12)
    expect(value("-n", { results })).toBe(-6)
    expect(value("n * 2 == 12 && n / 4 == 1.5", { results })).toBe(true)
    for (const text of ["s + 1", "b + 1", "missing + 1", "n / z", "n / 0", "big * 10", "'a' + 'b'", "-s"]) {
      expect(value(text, { results }), text).toBeUndefined()
    }
    expect(value("n / 0 == n / 0 || n / 0 != 1", { results })).toBe(false)
  })

  it("keeps the nesting and length bounds", () => {
    expect(failure("-".repeat(200) + "1")).toEqual({ position: maxConditionNesting, message: `nested deeper than ${maxConditionNesting} levels` })
    // The longest chain the length allows still evaluates.
    const chain = Array<string>(Math.floor((maxConditionLength + 1) / 2)).fill("1").join("+")
    expect(chain.length).toBeLessThanOrEqual(maxConditionLength)
    expect(value(chain)).toBe(Math.floor((maxConditionLength + 1) / 2))
  })

  it("refuses an operator without an operand", () => {
    expect(failure("a +")).toEqual({ position: 3, message: "expected a name, a literal or '(' but found the end of the condition" })
    expect(failure("a * / b")).toEqual({ position: 4, message: "expected a name, a literal or '(' but found '/'" })
    expect(failure("-")).toMatchObject({ position: 1 })
  })
})

describe("quoted names", () => {
  it("reads a quoted action, field or counter name; a quoted name alone is a string", () => {
    expect(parse('"verify-2".ok')).toEqual(actionField("verify-2", "ok"))
    expect(parse("'verify 2'.\"torque ok\"")).toEqual(actionField("verify 2", "torque ok"))
    expect(parse('counter."nok-1h"')).toEqual(counterRef("nok-1h"))
    expect(parse("counter.'nok 1h' < 3")).toEqual(compare("<", counterRef("nok 1h"), literal(3)))
    expect(parse('"counter".x')).toEqual(actionField("counter", "x"))
    expect(parse('"verify-2"')).toEqual(literal("verify-2"))
  })

  it("refuses what follows a name's dot when it is not a name, and deeper paths", () => {
    expect(failure('"a".1')).toEqual({ position: 4, message: "expected a field name after '\"a\".' but found '1'" })
    expect(failure('"a".b.c')).toEqual({ position: 5, message: "only action.field is supported, not deeper paths" })
    expect(failure('counter."open')).toEqual({ position: 8, message: "unterminated string" })
  })
})

describe("printCondition with the v1.1.0 constructs", () => {
  it("prints text that parses back to the same tree", () => {
    const texts = [
      "Press.X && Press.T > 5000",
      '"step-2".T <= 1',
      "order.JobOrderParameters.0.Value == \"fast\"",
      'order."Odd-Key".x',
      "a + b * c - d / e",
      "(a + b) * (c - d)",
      "a - (b - c)",
      "0 - a",
      "-1 * a",
      '"verify-2".ok',
      '"counter".x',
      '"order".x',
      'counter."nok 1h"',
      "!(a + 1)",
      "-0"
    ]
    for (const text of texts) {
      expect(printCondition(parse(text)), text).toBe(text)
      expect(parse(printCondition(parse(text)))).toEqual(parse(text))
    }
    expect(printCondition(parse("Press.T > 5s"))).toBe("Press.T > 5000")
    expect(printCondition(parse("-a * 2"))).toBe("(0 - a) * 2")
  })
})

describe("analyzeCondition: the constructs v1.1.0 added", () => {
  it("names each with its position", () => {
    expect(newSyntax("Press.X && Dry.T > 5s")).toEqual([
      { construct: "the step flag Press.X", position: 0 },
      { construct: "the step time Dry.T", position: 11 },
      { construct: "the duration 5s", position: 19 }
    ])
    expect(newSyntax('order.Priority + 1 > -n && "v-2".ok && counter."a b"').map((s) => s.construct)).toEqual([
      "the job order field order.Priority",
      "the operator '+'",
      "the unary operator '-'",
      'the quoted name "v-2"',
      'the quoted name counter."a b"'
    ])
  })

  it("finds none in the v1.0.0 language, negative numbers included", () => {
    for (const text of ["", "ok", "verify.ok && x > -1", "!(a == 'b') || counter.nok < 3", "'quoted string' == s", "Press.ok"]) {
      expect(newSyntax(text), text).toEqual([])
    }
  })
})

describe("conditionReads", () => {
  it("lists what a condition reads, each once, in order", () => {
    expect(conditionReads(parse("ok && verify.ok && verify.n + counter.a > Press.T || !ok && order.P.0 == order.P.0 && Dry.X && counter.b"))).toEqual({
      actions: ["verify"],
      names: ["ok"],
      counters: ["a", "b"],
      steps: ["Press", "Dry"],
      orderFields: [["P", "0"]]
    })
    expect(conditionReads(parse("true"))).toEqual({ actions: [], names: [], counters: [], steps: [], orderFields: [] })
  })
})

describe("stepTimeThresholds", () => {
  const thresholds = (text: string) => stepTimeThresholds(parse(text))

  it("gives every constant a step time is compared with, either side, literals folded", () => {
    expect(thresholds("Press.T > 5s")).toEqual([{ step: "Press", ms: 5000 }])
    expect(thresholds("5s <= Press.T")).toEqual([{ step: "Press", ms: 5000 }])
    expect(thresholds("Press.T >= 2 * 1min && !(Dry.T < 250ms) || Press.T > 5s")).toEqual([
      { step: "Press", ms: 120_000 },
      { step: "Dry", ms: 250 },
      { step: "Press", ms: 5000 }
    ])
    expect(thresholds("Press.T - 1s > 4s")).toEqual([{ step: "Press", ms: 5000 }])
    expect(thresholds("10s - Press.T < 0")).toEqual([{ step: "Press", ms: 10_000 }])
    expect(thresholds("Press.T / 2 == 1s")).toEqual([{ step: "Press", ms: 2000 }])
    expect(thresholds("Press.T > 2.5")).toEqual([{ step: "Press", ms: 3 }])
    expect(thresholds("Press.T > 5s || Press.T > 5000")).toEqual([{ step: "Press", ms: 5000 }])
  })

  it("gives none for what is not a constant, another step's time or a negative time", () => {
    for (const text of ["Press.T > n", "Press.T > counter.c", "Press.T > Dry.T", "Press.T * Press.T > 4", "Press.T > -1s", "Press.X", "Press.T", "Press.T > 'x'", "Press.T - Press.T > 1", "Press.T / 0 > 1"]) {
      expect(thresholds(text), text).toEqual([])
    }
  })
})

describe("tryEvaluateCondition with the v1.1.0 constructs", () => {
  it("still needs every counter it reaches, inside arithmetic too", () => {
    const ast = parse("counter.a + 1 > 2")
    expect(tryEvaluateCondition(ast, { results: [], counters: { a: 2 } })).toEqual(Result.succeed(true))
    expect(Result.isFailure(tryEvaluateCondition(ast, { results: [], counters: {} }))).toBe(true)
  })
})
