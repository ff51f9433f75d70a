import type { CompareOperator, ConditionAst } from "./ConditionAst.js"

/** The results a condition can read: the source step's actions of the current visit, in recipe order. */
export interface ConditionScope {
  readonly results: ReadonlyArray<{ readonly action: string; readonly result: unknown }>
}

/** Booleans as they are, numbers other than 0, non-empty strings; anything else (missing, null, objects) is false. */
export const isTruthy = (value: unknown): boolean => {
  switch (typeof value) {
    case "boolean":
      return value
    case "number":
      return value !== 0 && !Number.isNaN(value)
    case "string":
      return value !== ""
    default:
      return false
  }
}

// Own properties of plain objects only: a field called `constructor` or `length` must not reach
// into prototypes or array internals.
const fieldOf = (result: unknown, field: string): { readonly found: boolean; readonly value?: unknown } =>
  typeof result === "object" && result !== null && !Array.isArray(result) && Object.hasOwn(result, field)
    ? { found: true, value: (result as Record<string, unknown>)[field] }
    : { found: false }

const lookup = (scope: ConditionScope, field: string, action?: string): unknown => {
  let value: unknown = undefined
  for (const entry of scope.results) {
    if (action !== undefined && entry.action !== action) continue
    const hit = fieldOf(entry.result, field)
    if (hit.found) value = hit.value // later actions win
  }
  return value
}

const isScalar = (value: unknown): value is string | number | boolean =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean"

/**
 * Only scalars compare: a missing name (or a null, object or array) makes every comparison false,
 * `!=` included. `==`/`!=` are strict (`1 == "1"` is false); ordering needs two numbers or two strings.
 */
const compareValues = (operator: CompareOperator, left: unknown, right: unknown): boolean => {
  if (!isScalar(left) || !isScalar(right)) return false
  if (operator === "==") return left === right
  if (operator === "!=") return left !== right
  const ordered = (typeof left === "number" && typeof right === "number") || (typeof left === "string" && typeof right === "string")
  if (!ordered) return false
  switch (operator) {
    case "<":
      return left < right
    case "<=":
      return left <= right
    case ">":
      return left > right
    case ">=":
      return left >= right
  }
}

/** The value of an expression: a scalar, a looked-up result value, or `undefined` for an unknown name. */
export const evaluateValue = (ast: ConditionAst, scope: ConditionScope): unknown => {
  switch (ast._tag) {
    case "Literal":
      return ast.value
    case "Name":
      return lookup(scope, ast.name)
    case "ActionField":
      return lookup(scope, ast.field, ast.action)
    case "Not":
      return !isTruthy(evaluateValue(ast.operand, scope))
    case "Logical":
      return ast.operator === "&&"
        ? isTruthy(evaluateValue(ast.left, scope)) && isTruthy(evaluateValue(ast.right, scope))
        : isTruthy(evaluateValue(ast.left, scope)) || isTruthy(evaluateValue(ast.right, scope))
    case "Compare":
      return compareValues(ast.operator, evaluateValue(ast.left, scope), evaluateValue(ast.right, scope))
  }
}

/** Whether a condition holds for the given results. Never throws. */
export const evaluateCondition = (ast: ConditionAst, scope: ConditionScope): boolean => isTruthy(evaluateValue(ast, scope))
