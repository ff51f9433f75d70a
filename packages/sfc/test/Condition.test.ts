import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import {
  actionField,
  compare,
  type ConditionAst,
  evaluateCondition,
  evaluateValue,
  isTruthy,
  literal,
  logical,
  maxConditionLength,
  maxConditionNesting,
  name,
  not,
  parseCondition,
  printCondition
} from "@microdcs/sfc"

const parse = (text: string): ConditionAst => Result.getOrThrow(parseCondition(text))
const failure = (text: string) => {
  const result = parseCondition(text)
  if (Result.isSuccess(result)) throw new Error(`expected ${JSON.stringify(text)} not to parse`)
  return { message: result.failure.message, position: result.failure.position }
}
const holds = (text: string, results: ReadonlyArray<{ action: string; result: unknown }> = []) =>
  evaluateCondition(parse(text), { results })

describe("parseCondition", () => {
  it("reads empty, true and always as true", () => {
    for (const text of ["", "   ", "true", " always ", "(always)"]) expect(parse(text)).toEqual(literal(true))
    expect(parse("false")).toEqual(literal(false))
  })

  it("reads names, action fields and literals", () => {
    expect(parse("torque_ok")).toEqual(name("torque_ok"))
    expect(parse("_x9")).toEqual(name("_x9"))
    expect(parse("verify.torque_ok")).toEqual(actionField("verify", "torque_ok"))
    expect(parse("a.true")).toEqual(actionField("a", "true"))
    expect(parse("-12.5e2")).toEqual(literal(-1250))
    expect(parse("'it\\'s'")).toEqual(literal("it's"))
    expect(parse('"say \\"hi\\"\\n\\u0041"')).toEqual(literal('say "hi"\nA'))
    expect(parse(`'a "b"'`)).toEqual(literal('a "b"'))
  })

  it("binds ! tighter than comparisons, comparisons tighter than &&, && tighter than ||", () => {
    expect(parse("!a == b")).toEqual(compare("==", not(name("a")), name("b")))
    expect(parse("a == 1 && b || c")).toEqual(logical("||", logical("&&", compare("==", name("a"), literal(1)), name("b")), name("c")))
    expect(parse("a || b && c")).toEqual(logical("||", name("a"), logical("&&", name("b"), name("c"))))
    expect(parse("a && b && c")).toEqual(logical("&&", logical("&&", name("a"), name("b")), name("c")))
    expect(parse("!(a || b)")).toEqual(not(logical("||", name("a"), name("b"))))
    expect(parse("!!a")).toEqual(not(not(name("a"))))
    expect(parse("x.n >= -1")).toEqual(compare(">=", actionField("x", "n"), literal(-1)))
  })

  it("reports problems with their positions", () => {
    expect(failure("a &&")).toEqual({ position: 4, message: "expected a name, a literal or '(' but found the end of the condition" })
    expect(failure("a = 1")).toEqual({ position: 2, message: `unexpected character "=" (use '==')` })
    expect(failure("a & b")).toMatchObject({ position: 2, message: expect.stringContaining("'&&'") })
    expect(failure("a | b")).toMatchObject({ position: 2, message: expect.stringContaining("'||'") })
    expect(failure("(a || b")).toEqual({
      position: 7,
      message: "expected ')' to close the '(' at position 0 but found the end of the condition"
    })
    expect(failure("a == b == c")).toEqual({ position: 7, message: "comparisons cannot be chained; use parentheses" })
    expect(failure("a.b.c")).toEqual({ position: 3, message: "only action.field is supported, not deeper paths" })
    expect(failure("a.1")).toMatchObject({ position: 2 })
    expect(failure("  'open")).toEqual({ position: 2, message: "unterminated string" })
    expect(failure("'bad \\q'")).toEqual({ position: 5, message: "unknown escape sequence in string" })
    expect(failure("a b")).toEqual({ position: 2, message: "unexpected 'b'" })
    expect(failure("x @ y")).toMatchObject({ position: 2 })
    expect(failure("1e999")).toEqual({ position: 0, message: "number out of range" })
    expect(failure(")")).toMatchObject({ position: 0 })
  })

  it("bounds nesting and length instead of overflowing the stack", () => {
    const ok = "(".repeat(maxConditionNesting) + "a" + ")".repeat(maxConditionNesting)
    expect(parse(ok)).toEqual(name("a"))
    expect(failure("(" + ok + ")")).toEqual({ position: maxConditionNesting, message: `nested deeper than ${maxConditionNesting} levels` })
    expect(failure("!".repeat(200) + "a").position).toBe(maxConditionNesting)
    expect(failure("a".repeat(maxConditionLength + 1)).position).toBe(maxConditionLength)
    // The deepest tree the length allows still evaluates.
    const longChain = Array<string>(Math.floor((maxConditionLength + 2) / 3)).fill("a").join("||")
    expect(longChain.length).toBeLessThanOrEqual(maxConditionLength)
    expect(holds(longChain, [{ action: "x", result: { a: 1 } }])).toBe(true)
  })
})

describe("printCondition", () => {
  it("prints what parses back to the same tree", () => {
    for (const text of ["a || (b || c)", "(a || b) && c", "!(a == 1)", "(!a) == b", "a.b != \"x\\\"y\"", "!-1"]) {
      const ast = parse(text)
      expect(parse(printCondition(ast))).toEqual(ast)
    }
    expect(printCondition(parse("a || (b || c)"))).toBe("a || (b || c)")
    expect(printCondition(parse("(!a) == b"))).toBe("!a == b")
  })
})

describe("evaluateCondition", () => {
  const results = [
    { action: "position", result: { ok: true, slot: 3, label: "left" } },
    { action: "tighten", result: { ok: false, torque: 85.5 } },
    { action: "qa", result: "not an object" },
    { action: "list", result: [1, 2, 3] }
  ]

  it("resolves bare names against all results, later actions winning, and action.field against one", () => {
    expect(holds("ok", results)).toBe(false)
    expect(holds("position.ok", results)).toBe(true)
    expect(holds("slot == 3 && label == 'left'", results)).toBe(true)
    expect(holds("tighten.torque > 85 && tighten.torque <= 85.5", results)).toBe(true)
    expect(holds("position.torque", results)).toBe(false)
  })

  it("treats an unknown name as false and every comparison with it as false", () => {
    expect(holds("missing", results)).toBe(false)
    expect(holds("!missing", results)).toBe(true)
    expect(holds("missing == 1 || missing != 1 || missing < 1 || missing >= 1", results)).toBe(false)
    expect(holds("nobody.ok", results)).toBe(false)
    expect(evaluateValue(parse("missing"), { results })).toBeUndefined()
  })

  it("never reaches into prototypes or array internals", () => {
    expect(holds("constructor || toString || __proto__ || length", results)).toBe(false)
    expect(holds("list.length", results)).toBe(false)
    expect(holds("qa.length", results)).toBe(false)
  })

  it("compares mixed types strictly and never orders them", () => {
    const scope = [{ action: "a", result: { n: 1, s: "1", t: true, z: null, o: { x: 1 } } }]
    expect(holds("n == '1'", scope)).toBe(false)
    expect(holds("n != '1'", scope)).toBe(true)
    expect(holds("n == s", scope)).toBe(false)
    expect(holds("n < 'a' || n >= 'a' || t > false || t < 2", scope)).toBe(false)
    expect(holds("'a' < 'b' && \"b\" >= 'b'", scope)).toBe(true)
    expect(holds("z == z || z != 1 || o == o || o != 1", scope)).toBe(false)
    expect(holds("t == true && n == 1.0 && !(n != 1)", scope)).toBe(true)
  })

  it("applies truthiness: booleans as is, non-zero numbers, non-empty strings, nothing else", () => {
    expect([true, 1, -0.5, "x", "false"].map(isTruthy)).toEqual([true, true, true, true, true])
    expect([false, 0, Number.NaN, "", null, undefined, {}, [], [1]].map(isTruthy)).toEqual(Array(9).fill(false))
    const scope = [{ action: "a", result: { zero: 0, empty: "", obj: { x: 1 }, arr: [1], nil: null } }]
    expect(holds("zero || empty || obj || arr || nil", scope)).toBe(false)
  })

  it("evaluates the axle recipe's conditions", () => {
    const verify = (torque_ok: unknown) => [{ action: "verify", result: { torque_ok } }]
    expect(holds("torque_ok", verify(true))).toBe(true)
    expect(holds("!torque_ok", verify(true))).toBe(false)
    expect(holds("!torque_ok", verify(false))).toBe(true)
    expect(holds("!torque_ok", [])).toBe(true)
  })
})
