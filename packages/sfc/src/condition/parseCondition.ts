import { Result } from "effect"
import {
  actionField,
  compare,
  type CompareOperator,
  compareOperators,
  type ConditionAst,
  counterRef,
  keywords,
  literal,
  logical,
  name,
  not
} from "./ConditionAst.js"
import { ConditionError } from "./ConditionError.js"
import { COUNTER_PREFIX, type Token, tokenize } from "./tokenize.js"

/** Conditions are short; the limits keep recursion (parse and evaluate) far from the stack's end. */
export const maxConditionLength = 4096
export const maxConditionNesting = 64

// Thrown only inside this module and caught in `parseCondition`, so each grammar rule can stay a
// plain function of the cursor instead of threading a Result through every call.
class Stop {
  constructor(readonly error: ConditionError) {}
}

const describe = (token: Token): string => {
  switch (token.kind) {
    case "end":
      return "the end of the condition"
    case "identifier":
      return `'${token.text}'`
    case "punctuation":
      return `'${token.text}'`
    case "counter":
      return `counter.${token.name}`
    case "number":
      return `number ${token.value}`
    case "string":
      return `string ${JSON.stringify(token.value)}`
  }
}

const isCompareOperator = (text: string): text is CompareOperator => (compareOperators as ReadonlyArray<string>).includes(text)

/**
 * Precedence, loosest first: `||`, `&&`, comparisons (not chainable), `!`, then names, literals and
 * parentheses. `||` and `&&` associate to the left.
 */
class Parser {
  private index = 0
  private depth = 0

  constructor(private readonly tokens: ReadonlyArray<Token>) {}

  parse(): ConditionAst {
    const ast = this.or()
    const rest = this.peek()
    if (rest.kind !== "end") this.fail(`unexpected ${describe(rest)}`, rest)
    return ast
  }

  private or(): ConditionAst {
    let left = this.and()
    while (this.accept("||")) left = logical("||", left, this.and())
    return left
  }

  private and(): ConditionAst {
    let left = this.comparison()
    while (this.accept("&&")) left = logical("&&", left, this.comparison())
    return left
  }

  private comparison(): ConditionAst {
    const left = this.unary()
    const operator = this.peek()
    if (operator.kind !== "punctuation" || !isCompareOperator(operator.text)) return left
    this.index += 1
    const ast = compare(operator.text, left, this.unary())
    const next = this.peek()
    if (next.kind === "punctuation" && isCompareOperator(next.text)) {
      this.fail("comparisons cannot be chained; use parentheses", next)
    }
    return ast
  }

  private unary(): ConditionAst {
    const token = this.peek()
    if (!this.accept("!")) return this.primary()
    return this.nested(token, () => not(this.unary()))
  }

  private primary(): ConditionAst {
    const token = this.next()
    switch (token.kind) {
      case "number":
      case "string":
        return literal(token.value)
      case "identifier":
        return this.reference(token.text)
      case "counter":
        return counterRef(token.name)
      case "punctuation":
        if (token.text === "(") {
          const inner = this.nested(token, () => this.or())
          this.expect(")", "to close the '(' at position " + token.position)
          return inner
        }
    }
    return this.fail(`expected a name, a literal or '(' but found ${describe(token)}`, token)
  }

  /** `field`, `action.field`, or a keyword literal when the word stands alone. */
  private reference(word: string): ConditionAst {
    const dot = this.peek()
    if (this.accept(".")) {
      // `counter.x` is one token (tokenize.ts); spaced out it would silently read an action's field.
      if (word === COUNTER_PREFIX) this.fail("write a counter as counter.<name>, without spaces", dot)
      const field = this.next()
      if (field.kind !== "identifier") return this.fail(`expected a field name after '${word}.' but found ${describe(field)}`, field)
      const after = this.peek()
      if (after.kind === "punctuation" && after.text === ".") this.fail("only action.field is supported, not deeper paths", after)
      return actionField(word, field.text)
    }
    const keyword = keywords.get(word)
    return keyword === undefined ? name(word) : literal(keyword)
  }

  private nested(token: Token, rule: () => ConditionAst): ConditionAst {
    if (this.depth >= maxConditionNesting) this.fail(`nested deeper than ${maxConditionNesting} levels`, token)
    this.depth += 1
    const ast = rule()
    this.depth -= 1
    return ast
  }

  private peek(): Token {
    // The token list always ends with `end`, and `next` never moves past it.
    return this.tokens[this.index]!
  }

  private next(): Token {
    const token = this.peek()
    if (token.kind !== "end") this.index += 1
    return token
  }

  private accept(text: string): boolean {
    const token = this.peek()
    if (token.kind !== "punctuation" || token.text !== text) return false
    this.index += 1
    return true
  }

  private expect(text: string, why: string): void {
    const token = this.peek()
    if (!this.accept(text)) this.fail(`expected '${text}' ${why} but found ${describe(token)}`, token)
  }

  private fail(message: string, token: Token): never {
    throw new Stop(new ConditionError({ message, position: token.position }))
  }
}

/**
 * Parses a transition condition. An empty (or all-blank) condition is `true`; `always` is another
 * spelling of `true`. Never throws: every problem is a `ConditionError` with its position.
 */
export const parseCondition = (text: string): Result.Result<ConditionAst, ConditionError> => {
  if (text.length > maxConditionLength) {
    return Result.fail(new ConditionError({ message: `longer than ${maxConditionLength} characters`, position: maxConditionLength }))
  }
  if (/^[ \t\r\n]*$/.test(text)) return Result.succeed(literal(true))
  return Result.flatMap(tokenize(text), (tokens) => {
    try {
      return Result.succeed(new Parser(tokens).parse())
    } catch (error) {
      if (error instanceof Stop) return Result.fail(error.error)
      throw error
    }
  })
}
