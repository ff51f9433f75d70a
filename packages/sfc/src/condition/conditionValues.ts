import type { ArithmeticOperator } from "./ConditionAst.js"

const isIndex = (segment: string): boolean => /^(?:0|[1-9][0-9]*)$/.test(segment)

// Own properties of plain objects and array elements by index only: a path segment called
// `constructor` or `length` must not reach into prototypes or array internals.
const child = (value: unknown, segment: string): unknown => {
  if (Array.isArray(value)) return isIndex(segment) ? value[Number(segment)] : undefined
  if (typeof value !== "object" || value === null || !Object.hasOwn(value, segment)) return undefined
  return (value as Record<string, unknown>)[segment]
}

/** The value at `path` inside the job order, or undefined when any segment is missing. */
export const orderValue = (order: unknown, path: ReadonlyArray<string>): unknown => {
  let value = order
  for (const segment of path) {
    value = child(value, segment)
    if (value === undefined) return undefined
  }
  return value
}

/** Numbers only: anything else, a division by zero or a result that is not finite is missing. */
export const arithmeticValue = (operator: ArithmeticOperator, left: unknown, right: unknown): number | undefined => {
  if (typeof left !== "number" || typeof right !== "number") return undefined
  const value = operator === "+" ? left + right : operator === "-" ? left - right : operator === "*" ? left * right : right === 0 ? Number.NaN : left / right
  return Number.isFinite(value) ? value : undefined
}
