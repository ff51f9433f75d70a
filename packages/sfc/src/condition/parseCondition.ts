import { Result } from "effect"
import {
  arithmetic,
  compare,
  type CompareOperator,
  compareOperators,
  type ConditionAst,
  counterRef,
  literal,
  logical,
  not
} from "./ConditionAst.js"
import { ConditionError } from "./ConditionError.js"
import { Cursor, describe, maxConditionLength, type NewSyntax, Stop } from "./conditionCursor.js"
import { reference } from "./parseReference.js"
import { type Token, tokenize } from "./tokenize.js"

export { maxConditionLength, maxConditionNesting, type NewSyntax } from "./conditionCursor.js"

/** What the parser needs to know of the recipe. */
export interface ConditionOptions {
  /** The recipe's step names: `Press.X` and `Press.T` are step flags when `Press` is one of them. */
  readonly steps?: Iterable<string> | undefined
}

/**
 * Precedence, loosest first: `||`, `&&`, comparisons (not chainable), `+ -`, `* /`, the unary
 * `!` and `-`, then names, literals and parentheses. Binary operators associate to the left.
 */
const or = (cursor: Cursor): ConditionAst => {
  let left = and(cursor)
  while (cursor.accept("||")) left = logical("||", left, and(cursor))
  return left
}

const and = (cursor: Cursor): ConditionAst => {
  let left = comparison(cursor)
  while (cursor.accept("&&")) left = logical("&&", left, comparison(cursor))
  return left
}

const comparison = (cursor: Cursor): ConditionAst => {
  const left = additive(cursor)
  const operator = cursor.acceptAny<CompareOperator>(compareOperators)
  if (operator === undefined) return left
  const ast = compare(operator, left, additive(cursor))
  const next = cursor.peek()
  if (next.kind === "punctuation" && (compareOperators as ReadonlyArray<string>).includes(next.text)) {
    cursor.fail("comparisons cannot be chained; use parentheses", next)
  }
  return ast
}

const binary = <const Op extends "+" | "-" | "*" | "/">(operators: ReadonlyArray<Op>, operand: (cursor: Cursor) => ConditionAst) =>
  (cursor: Cursor): ConditionAst => {
    let left = operand(cursor)
    for (;;) {
      const token = cursor.peek()
      const op = cursor.acceptAny(operators)
      if (op === undefined) return left
      cursor.uses(`the operator '${op}'`, token)
      left = arithmetic(op, left, operand(cursor))
    }
  }

/**
 * `-` before a number is part of the literal (`x > -1`, as before arithmetic); before anything
 * else it is `0 - operand`.
 */
const negate = (cursor: Cursor, token: Token, operand: ConditionAst): ConditionAst => {
  if (operand._tag === "Literal" && typeof operand.value === "number") return literal(-operand.value)
  cursor.uses("the unary operator '-'", token)
  return arithmetic("-", literal(0), operand)
}

const unary = (cursor: Cursor): ConditionAst => {
  const token = cursor.peek()
  if (cursor.accept("!")) return cursor.nested(token, () => not(unary(cursor)))
  if (cursor.accept("-")) return cursor.nested(token, () => negate(cursor, token, unary(cursor)))
  return primary(cursor)
}

const multiplicative = binary(["*", "/"], unary)
const additive = binary(["+", "-"], multiplicative)

const primary = (cursor: Cursor): ConditionAst => {
  const token = cursor.next()
  switch (token.kind) {
    case "number":
      if (token.duration) cursor.uses(`the duration ${token.text}`, token)
      return literal(token.value)
    case "string":
    case "identifier":
      return reference(cursor, token)
    case "counter":
      if (token.quoted) cursor.uses(`the quoted name counter.${JSON.stringify(token.name)}`, token)
      return counterRef(token.name)
    case "punctuation":
      if (token.text === "(") {
        const inner = cursor.nested(token, () => or(cursor))
        cursor.expect(")", "to close the '(' at position " + token.position)
        return inner
      }
  }
  return cursor.fail(`expected a name, a literal or '(' but found ${describe(token)}`, token)
}

const parseTokens = (tokens: ReadonlyArray<Token>, options: ConditionOptions): { ast: ConditionAst; newSyntax: ReadonlyArray<NewSyntax> } => {
  const cursor = new Cursor(tokens, new Set(options.steps ?? []))
  const ast = or(cursor)
  const rest = cursor.peek()
  if (rest.kind !== "end") cursor.fail(`unexpected ${describe(rest)}`, rest)
  return { ast, newSyntax: cursor.newSyntax }
}

/**
 * Parses a condition and lists the constructs of recipe schema v1.1.0 it uses (step flags,
 * durations, job order fields, arithmetic, quoted names), for the validation of a v1.0.0 recipe.
 * Never throws.
 */
export const analyzeCondition = (
  text: string,
  options: ConditionOptions = {}
): Result.Result<{ readonly ast: ConditionAst; readonly newSyntax: ReadonlyArray<NewSyntax> }, ConditionError> => {
  if (text.length > maxConditionLength) {
    return Result.fail(new ConditionError({ message: `longer than ${maxConditionLength} characters`, position: maxConditionLength }))
  }
  if (/^[ \t\r\n]*$/.test(text)) return Result.succeed({ ast: literal(true), newSyntax: [] })
  return Result.flatMap(tokenize(text), (tokens) => {
    try {
      return Result.succeed(parseTokens(tokens, options))
    } catch (error) {
      if (error instanceof Stop) return Result.fail(error.error)
      throw error
    }
  })
}

/**
 * Parses a transition condition. An empty (or all-blank) condition is `true`; `always` is another
 * spelling of `true`. With `options.steps`, `Press.X` / `Press.T` of a step are step flags.
 * Never throws: every problem is a `ConditionError` with its position.
 */
export const parseCondition = (text: string, options: ConditionOptions = {}): Result.Result<ConditionAst, ConditionError> =>
  Result.map(analyzeCondition(text, options), ({ ast }) => ast)
