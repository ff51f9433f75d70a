import type { ConditionAst } from "./ConditionAst.js"
import { ConditionError } from "./ConditionError.js"
import type { Token } from "./tokenize.js"

/** Conditions are short; the limits keep recursion (parse and evaluate) far from the stack's end. */
export const maxConditionLength = 4096
export const maxConditionNesting = 64

/**
 * A construct recipe schema v1.1.0 added to the condition language, where it first appears:
 * what the validation names when a v1.0.0 recipe uses it.
 */
export interface NewSyntax {
  /** e.g. `the step flag Press.X`, `the duration 5s`, `the operator '+'`. */
  readonly construct: string
  readonly position: number
}

// Thrown only by the cursor and caught in `parseCondition`, so each grammar rule can stay a
// plain function of the cursor instead of threading a Result through every call.
export class Stop {
  constructor(readonly error: ConditionError) {}
}

export const describe = (token: Token): string => {
  switch (token.kind) {
    case "end":
      return "the end of the condition"
    case "identifier":
    case "index":
    case "punctuation":
      return `'${token.text}'`
    case "counter":
      return `counter.${token.name}`
    case "number":
      return `number ${token.text}`
    case "string":
      return `string ${JSON.stringify(token.value)}`
  }
}

/** The parser's position in the token list, its nesting depth and the new syntax it met. */
export class Cursor {
  private index = 0
  private depth = 0
  readonly newSyntax: Array<NewSyntax> = []

  constructor(
    private readonly tokens: ReadonlyArray<Token>,
    /** The recipe's step names: `X` and `T` after one of them are step flags. */
    readonly steps: ReadonlySet<string>
  ) {}

  peek(): Token {
    // The token list always ends with `end`, and `next` never moves past it.
    return this.tokens[this.index]!
  }

  next(): Token {
    const token = this.peek()
    if (token.kind !== "end") this.index += 1
    return token
  }

  /** The punctuation at the cursor when it is one of `texts`, consumed; else undefined. */
  acceptAny<const T extends string>(texts: ReadonlyArray<T>): T | undefined {
    const token = this.peek()
    if (token.kind !== "punctuation" || !(texts as ReadonlyArray<string>).includes(token.text)) return undefined
    this.index += 1
    return token.text as T
  }

  accept(text: string): boolean {
    return this.acceptAny([text]) !== undefined
  }

  expect(text: string, why: string): void {
    const token = this.peek()
    if (!this.accept(text)) this.fail(`expected '${text}' ${why} but found ${describe(token)}`, token)
  }

  nested(token: Token, rule: () => ConditionAst): ConditionAst {
    if (this.depth >= maxConditionNesting) this.fail(`nested deeper than ${maxConditionNesting} levels`, token)
    this.depth += 1
    const ast = rule()
    this.depth -= 1
    return ast
  }

  uses(construct: string, token: Token): void {
    this.newSyntax.push({ construct, position: token.position })
  }

  fail(message: string, token: Token): never {
    throw new Stop(new ConditionError({ message, position: token.position }))
  }
}
