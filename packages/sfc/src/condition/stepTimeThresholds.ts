import type { ArithmeticOperator, Compare, ConditionAst } from "./ConditionAst.js"

/** A time into a step's activation at which a comparison of its `Step.T` can change its value. */
export interface StepTimeThreshold {
  readonly step: string
  readonly ms: number
}

/** `a * Step.T + b`; a side without a step time has `a = 0`. */
interface Linear {
  readonly step?: string
  readonly a: number
  readonly b: number
}

const constant = (b: number): Linear => ({ a: 0, b })

const combine = (operator: ArithmeticOperator, l: Linear, r: Linear): Linear | undefined => {
  if (l.a !== 0 && r.a !== 0 && l.step !== r.step) return undefined
  const step = l.a !== 0 ? l.step : r.step
  const at = (a: number, b: number): Linear => (a === 0 ? constant(b) : { step: step!, a, b })
  switch (operator) {
    case "+":
      return at(l.a + r.a, l.b + r.b)
    case "-":
      return at(l.a - r.a, l.b - r.b)
    case "*":
      return l.a !== 0 && r.a !== 0 ? undefined : at(l.a * r.b + r.a * l.b, l.b * r.b)
    case "/":
      return r.a !== 0 || r.b === 0 ? undefined : at(l.a / r.b, l.b / r.b)
  }
}

/** An expression as a linear function of one step time, when it is one; literals folded. */
const linear = (ast: ConditionAst): Linear | undefined => {
  switch (ast._tag) {
    case "Literal":
      return typeof ast.value === "number" ? constant(ast.value) : undefined
    case "StepFlag":
      return ast.flag === "T" ? { step: ast.step, a: 1, b: 0 } : undefined
    case "Arithmetic": {
      const left = linear(ast.left)
      const right = left && linear(ast.right)
      return left && right && combine(ast.operator, left, right)
    }
    default:
      return undefined
  }
}

/** Where `left - right` crosses 0, when it is a linear function of one step time. */
const thresholdOf = (ast: Compare): StepTimeThreshold | undefined => {
  const left = linear(ast.left)
  const right = left && linear(ast.right)
  const difference = left && right && combine("-", left, right)
  if (difference === undefined || difference.a === 0) return undefined
  const ms = Math.ceil(-difference.b / difference.a) + 0 // no -0
  return Number.isFinite(ms) && ms >= 0 ? { step: difference.step!, ms } : undefined
}

const comparisonsIn = (ast: ConditionAst): ReadonlyArray<Compare> => {
  switch (ast._tag) {
    case "Compare":
      return [ast, ...comparisonsIn(ast.left), ...comparisonsIn(ast.right)]
    case "Not":
      return comparisonsIn(ast.operand)
    case "Logical":
    case "Arithmetic":
      return [...comparisonsIn(ast.left), ...comparisonsIn(ast.right)]
    default:
      return []
  }
}

/**
 * Every time into a step's activation at which a comparison of its `Step.T` with a constant can
 * change (`Press.T > 5s`, `2 * 1min <= Dry.T`, `Press.T - 1s >= 4s`: either side, any operator,
 * arithmetic of literals folded), each once, rounded up to a whole ms; negative ones are left
 * out. The engine re-evaluates an active step's transitions at `enteredAt + ms` (+1 ms for `<`
 * and `>`). A step time compared with anything but a constant (a result, a counter, another
 * step's time) gives no threshold.
 */
export const stepTimeThresholds = (ast: ConditionAst): ReadonlyArray<StepTimeThreshold> => {
  const found = new Map<string, StepTimeThreshold>()
  for (const comparison of comparisonsIn(ast)) {
    const threshold = thresholdOf(comparison)
    if (threshold !== undefined) found.set(JSON.stringify([threshold.step, threshold.ms]), threshold)
  }
  return [...found.values()]
}
