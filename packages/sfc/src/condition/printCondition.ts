import type { ConditionAst } from "./ConditionAst.js"

// Binding strength, loosest first; an operand weaker than its slot needs parentheses.
const strength = (ast: ConditionAst): number => {
  switch (ast._tag) {
    case "Logical":
      return ast.operator === "||" ? 1 : 2
    case "Compare":
      return 3
    case "Not":
      return 4
    default:
      return 5
  }
}

const wrap = (ast: ConditionAst, atLeast: number): string => {
  const text = printCondition(ast)
  return strength(ast) >= atLeast ? text : `(${text})`
}

/**
 * Prints a condition so that `parseCondition` reads back the same tree: left-associative `&&`/`||`
 * get parentheses on the right only, comparisons never chain. A bare name that is a keyword
 * (`true`, `false`, `always`) cannot be written and prints as itself, which reads back as the literal.
 */
export const printCondition = (ast: ConditionAst): string => {
  switch (ast._tag) {
    case "Literal":
      return typeof ast.value === "string" ? JSON.stringify(ast.value) : String(ast.value)
    case "Name":
      return ast.name
    case "ActionField":
      return `${ast.action}.${ast.field}`
    case "Counter":
      return `counter.${ast.name}`
    case "Not":
      return `!${wrap(ast.operand, 4)}`
    case "Logical": {
      const own = strength(ast)
      return `${wrap(ast.left, own)} ${ast.operator} ${wrap(ast.right, own + 1)}`
    }
    case "Compare":
      return `${wrap(ast.left, 4)} ${ast.operator} ${wrap(ast.right, 4)}`
  }
}

