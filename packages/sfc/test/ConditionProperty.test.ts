import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import {
  actionField,
  arithmetic,
  arithmeticOperators,
  compare,
  compareOperators,
  type ConditionAst,
  type ConditionScope,
  counterRef,
  evaluateValue,
  keywords,
  literal,
  logical,
  maxConditionLength,
  name,
  not,
  orderField,
  parseCondition,
  printCondition,
  stepFlag
} from "@microdcs/sfc"

// Few names, so generated conditions often hit fields the generated results actually have.
const fieldName = fc.constantFrom("a", "b", "ok", "torque_ok", "_x", "n2", "true", "length")
const bareName = fieldName.filter((n) => !keywords.has(n))
const actionName = fc.constantFrom("verify", "qa", "t1", "verify-2", "counter", "order", "", "a b")
// Disjoint from the action names: `X`/`T` after a step's name are flags.
const stepName = fc.constantFrom("Press", "Dry", "step-2", "true")
const steps = ["Press", "Dry", "step-2", "true"]
const counterName = fc.constantFrom("nok_1h", "torque.nok-1h", "a b", "")
const orderPath = fc.array(fc.constantFrom("Priority", "JobOrderParameters", "0", "1", "01", "Value", "Odd-Key", "length"), { minLength: 1, maxLength: 4 })
const quotedField = fc.constantFrom("X", "T", "ok-1", "")

// -0 included: it prints as "-0", the negation of 0.
const number = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ noNaN: true, noDefaultInfinity: true }))
const literalValue = fc.oneof(fc.boolean(), number, fc.string({ unit: "binary", maxLength: 8 }))

const { ast } = fc.letrec<{ ast: ConditionAst }>((tie) => ({
  ast: fc.oneof(
    // maxDepth keeps nesting far below the parser's limit.
    { depthSize: "small", maxDepth: 12, withCrossShrink: true },
    literalValue.map(literal),
    bareName.map(name),
    fc.tuple(actionName, fc.oneof(fieldName, quotedField)).map(([a, f]) => actionField(a, f)),
    fc.tuple(stepName, fc.constantFrom("X" as const, "T" as const)).map(([step, flag]) => stepFlag(step, flag)),
    counterName.map(counterRef),
    orderPath.map(orderField),
    tie("ast").map(not),
    fc.tuple(fc.constantFrom(...arithmeticOperators), tie("ast"), tie("ast")).map(([op, l, r]) => arithmetic(op, l, r)),
    fc.tuple(fc.constantFrom("&&" as const, "||" as const), tie("ast"), tie("ast")).map(([op, l, r]) => logical(op, l, r)),
    fc.tuple(fc.constantFrom(...compareOperators), tie("ast"), tie("ast")).map(([op, l, r]) => compare(op, l, r))
  )
}))

const resultValue = fc.oneof(
  fc.boolean(),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom("", "a", "b", "0"),
  fc.constant(null),
  fc.constant({ x: 1 })
)
const rows = fc.array(
  fc.record({
    action: actionName,
    result: fc.oneof(fc.dictionary(fieldName, resultValue, { maxKeys: 4 }), resultValue, fc.array(resultValue, { maxLength: 2 }))
  }),
  { maxLength: 4 }
)
const orderDocument = fc.oneof(
  fc.constant(undefined),
  fc.constant("not an object"),
  fc.record({ Priority: resultValue, JobOrderParameters: fc.array(fc.dictionary(fc.constantFrom("Value", "ID"), resultValue), { maxLength: 2 }), "Odd-Key": fc.constant({ length: 1 }) })
)
const stepClock = fc.oneof(
  fc.constant(undefined),
  fc.tuple(fc.subarray(steps), fc.integer({ min: 0, max: 10_000 })).map(([active, ms]) => ({
    isActive: (step: string) => active.includes(step),
    elapsedMs: (step: string) => (active.includes(step) ? ms : 0)
  }))
)
const counterValues = fc.option(fc.dictionary(counterName, fc.integer({ min: -3, max: 3 })), { nil: undefined })
const scopes: fc.Arbitrary<ConditionScope> = fc.record({ results: rows, steps: stepClock, order: orderDocument, counters: counterValues })
const results = scopes

// Pieces of the language, so random texts get past the tokenizer often enough to test the parser.
const pieces = ["a", "b.c", "1", "-2.5", "'s'", '"t\\n"', "true", "always", "!", "&&", "||", "==", "<=", ">", "(", ")", " ", ".", "=", "&", "'", "+", "-", "*", "/", "5s", "2min", "Press.T", "Press.X", "order.", "order.A.0", "counter.", '"q-1".', "0"]
const tokenSoup = fc.array(fc.constantFrom(...pieces), { maxLength: 30 }).map((parts) => parts.join(""))

describe("condition properties", () => {
  it("prints every tree so that it parses back to the same tree, with the same value", () => {
    fc.assert(
      fc.property(ast, results, (tree, scope) => {
        const text = printCondition(tree)
        fc.pre(text.length <= maxConditionLength) // longer texts are refused by design (tested elsewhere)
        const parsed = parseCondition(text, { steps })
        expect(Result.isSuccess(parsed) ? parsed.success : parsed.failure).toEqual(tree)
        if (Result.isFailure(parsed)) return
        expect(evaluateValue(parsed.success, scope)).toEqual(evaluateValue(tree, scope))
        expect(printCondition(parsed.success)).toBe(text)
      }),
      { numRuns: 1000 }
    )
  })

  it("never throws on any text, and places errors inside it", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary", maxLength: 60 }), tokenSoup), results, (text, scope) => {
        const parsed = parseCondition(text, { steps })
        if (Result.isFailure(parsed)) {
          expect(parsed.failure.position).toBeGreaterThanOrEqual(0)
          expect(parsed.failure.position).toBeLessThanOrEqual(Math.min(text.length, maxConditionLength))
        } else {
          expect(typeof evaluateValue(parsed.success, scope) !== "function").toBe(true)
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("computes and compares any values without throwing: a finite number or missing, a boolean", () => {
    const anyValue = fc.oneof(fc.jsonValue(), fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, Number.MAX_VALUE, Number.MIN_VALUE), fc.anything())
    const operand = fc.constantFrom(name("l"), name("r"), literal(0), literal(1e308), literal(-0))
    const expression = fc.oneof(
      fc.tuple(fc.constantFrom(...arithmeticOperators), operand, operand).map(([op, l, r]) => arithmetic(op, l, r)),
      fc.tuple(fc.constantFrom(...arithmeticOperators), operand, operand, fc.constantFrom(...arithmeticOperators), operand).map(([op, l, r, op2, r2]) => arithmetic(op2, arithmetic(op, l, r), r2))
    )
    fc.assert(
      fc.property(expression, fc.constantFrom(...compareOperators), anyValue, anyValue, (tree, op, l, r) => {
        const scope = { results: [{ action: "v", result: { l, r } }] }
        const computed = evaluateValue(tree, scope)
        expect(computed === undefined || (typeof computed === "number" && Number.isFinite(computed))).toBe(true)
        expect(typeof evaluateValue(compare(op, tree, name("r")), scope)).toBe("boolean")
        expect(typeof evaluateValue(compare(op, name("l"), tree), scope)).toBe("boolean")
      }),
      { numRuns: 1000 }
    )
  })
})
