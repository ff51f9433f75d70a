import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import {
  actionField,
  compare,
  compareOperators,
  type ConditionAst,
  evaluateValue,
  keywords,
  literal,
  logical,
  maxConditionLength,
  name,
  not,
  parseCondition,
  printCondition
} from "@microdcs/sfc"

// Few names, so generated conditions often hit fields the generated results actually have.
const fieldName = fc.constantFrom("a", "b", "ok", "torque_ok", "_x", "n2", "true", "length")
const bareName = fieldName.filter((n) => !keywords.has(n))
const actionName = fc.constantFrom("verify", "qa", "t1")

// -0 prints as "0"; it is the same condition but not the same tree.
const number = fc
  .oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ noNaN: true, noDefaultInfinity: true }))
  .map((n) => (n === 0 ? 0 : n))
const literalValue = fc.oneof(fc.boolean(), number, fc.string({ unit: "binary", maxLength: 8 }))

const { ast } = fc.letrec<{ ast: ConditionAst }>((tie) => ({
  ast: fc.oneof(
    // maxDepth keeps nesting far below the parser's limit.
    { depthSize: "small", maxDepth: 12, withCrossShrink: true },
    literalValue.map(literal),
    bareName.map(name),
    fc.tuple(actionName, fieldName).map(([a, f]) => actionField(a, f)),
    tie("ast").map(not),
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
const results = fc.array(
  fc.record({
    action: actionName,
    result: fc.oneof(fc.dictionary(fieldName, resultValue, { maxKeys: 4 }), resultValue, fc.array(resultValue, { maxLength: 2 }))
  }),
  { maxLength: 4 }
)

// Pieces of the language, so random texts get past the tokenizer often enough to test the parser.
const pieces = ["a", "b.c", "1", "-2.5", "'s'", '"t\\n"', "true", "always", "!", "&&", "||", "==", "<=", ">", "(", ")", " ", ".", "=", "&", "'"]
const tokenSoup = fc.array(fc.constantFrom(...pieces), { maxLength: 30 }).map((parts) => parts.join(""))

describe("condition properties", () => {
  it("prints every tree so that it parses back to the same tree, with the same value", () => {
    fc.assert(
      fc.property(ast, results, (tree, scope) => {
        const text = printCondition(tree)
        fc.pre(text.length <= maxConditionLength) // longer texts are refused by design (tested elsewhere)
        const parsed = parseCondition(text)
        expect(Result.isSuccess(parsed) ? parsed.success : parsed.failure).toEqual(tree)
        if (Result.isFailure(parsed)) return
        expect(evaluateValue(parsed.success, { results: scope })).toEqual(evaluateValue(tree, { results: scope }))
        expect(printCondition(parsed.success)).toBe(text)
      }),
      { numRuns: 1000 }
    )
  })

  it("never throws on any text, and places errors inside it", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary", maxLength: 60 }), tokenSoup), results, (text, scope) => {
        const parsed = parseCondition(text)
        if (Result.isFailure(parsed)) {
          expect(parsed.failure.position).toBeGreaterThanOrEqual(0)
          expect(parsed.failure.position).toBeLessThanOrEqual(Math.min(text.length, maxConditionLength))
        } else {
          expect(typeof evaluateValue(parsed.success, { results: scope }) !== "function").toBe(true)
        }
      }),
      { numRuns: 2000 }
    )
  })
})
