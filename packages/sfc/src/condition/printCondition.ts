import type { ConditionAst, Literal } from "./ConditionAst.js"
import { ORDER_PREFIX } from "./parseReference.js"
import { COUNTER_PREFIX } from "./tokenize.js"

// Binding strength, loosest first; an operand weaker than its slot needs parentheses.
const strength = (ast: ConditionAst): number => {
  switch (ast._tag) {
    case "Logical":
      return ast.operator === "||" ? 1 : 2
    case "Compare":
      return 3
    case "Arithmetic":
      return ast.operator === "+" || ast.operator === "-" ? 4 : 5
    case "Not":
      return 6
    case "Literal":
      // `-1` is read as the unary minus of 1, folded.
      return typeof ast.value === "number" && (ast.value < 0 || Object.is(ast.value, -0)) ? 6 : 7
    default:
      return 7
  }
}

const wrap = (ast: ConditionAst, atLeast: number): string => {
  const text = printCondition(ast)
  return strength(ast) >= atLeast ? text : `(${text})`
}

const isWord = (text: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*$/.test(text)

/** A name before a `.`: as a word unless it is not one, or a word the language reads otherwise. */
const owner = (name: string): string => (isWord(name) && name !== COUNTER_PREFIX && name !== ORDER_PREFIX ? name : JSON.stringify(name))
const field = (name: string): string => (isWord(name) ? name : JSON.stringify(name))
const segment = (name: string): string => (isWord(name) || /^[0-9]+$/.test(name) ? name : JSON.stringify(name))
const counterName = (name: string): string => (/^[A-Za-z0-9_.-]+$/.test(name) ? name : JSON.stringify(name))

const printLiteral = ({ value }: Literal): string => {
  if (typeof value === "string") return JSON.stringify(value)
  return Object.is(value, -0) ? "-0" : String(value)
}

/**
 * Prints a condition so that `parseCondition` (with the same steps) reads back the same tree:
 * left-associative operators get parentheses on the right only, comparisons never chain, names
 * that are not words are quoted. A duration prints as its milliseconds. A bare name that is a
 * keyword (`true`, `false`, `always`) cannot be written and prints as itself, which reads back
 * as the literal.
 */
export const printCondition = (ast: ConditionAst): string => {
  switch (ast._tag) {
    case "Literal":
      return printLiteral(ast)
    case "Name":
      return ast.name
    case "ActionField":
      return `${owner(ast.action)}.${field(ast.field)}`
    case "Counter":
      return `${COUNTER_PREFIX}.${counterName(ast.name)}`
    case "StepFlag":
      return `${owner(ast.step)}.${ast.flag}`
    case "OrderField":
      return [ORDER_PREFIX, ...ast.path.map(segment)].join(".")
    case "Not":
      return `!${wrap(ast.operand, 6)}`
    case "Logical":
    case "Arithmetic":
    case "Compare": {
      const own = strength(ast)
      // Comparisons do not chain: both sides must bind tighter.
      return `${wrap(ast.left, ast._tag === "Compare" ? own + 1 : own)} ${ast.operator} ${wrap(ast.right, own + 1)}`
    }
  }
}
