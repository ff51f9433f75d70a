import { Result } from "effect"
import type { CompareOperator, ConditionAst } from "./ConditionAst.js"
import { ConditionEvaluationError } from "./ConditionError.js"
import { arithmeticValue, orderValue } from "./conditionValues.js"

/** What the engine knows of the steps: `Press.X` and `Press.T`. */
export interface StepClock {
  /** Whether the step is active now. */
  readonly isActive: (step: string) => boolean
  /** Ms the step has been active in its current activation; after it was left, its last one's length; 0 if never active. */
  readonly elapsedMs: (step: string) => number
}

/** The results a condition can read: the source step's actions of the current visit, in recipe order. */
export interface ConditionScope {
  readonly results: ReadonlyArray<{ readonly action: string; readonly result: unknown }>
  /** Counter values by name (`counter.x`); the runtime reads them before the core evaluates. */
  readonly counters?: Readonly<Record<string, number>> | undefined
  /** `Step.X` and `Step.T`; without it they read as missing. */
  readonly steps?: StepClock | undefined
  /** The job order document as the MES sent it (`order.<path>`); without it every field reads as missing. */
  readonly order?: unknown
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

// Thrown only inside this module and caught in `tryEvaluateCondition`, so the evaluator stays a
// plain recursive function.
class MissingCounter {
  constructor(readonly name: string) {}
}

type OnMissing = (counter: string) => unknown

const counterValue = (scope: ConditionScope, counter: string, onMissing: OnMissing): unknown =>
  scope.counters !== undefined && Object.hasOwn(scope.counters, counter) ? scope.counters[counter] : onMissing(counter)

const valueOf = (ast: ConditionAst, scope: ConditionScope, onMissing: OnMissing): unknown => {
  switch (ast._tag) {
    case "Literal":
      return ast.value
    case "Name":
      return lookup(scope, ast.name)
    case "ActionField":
      return lookup(scope, ast.field, ast.action)
    case "Counter":
      return counterValue(scope, ast.name, onMissing)
    case "StepFlag":
      return scope.steps === undefined ? undefined : ast.flag === "X" ? scope.steps.isActive(ast.step) : scope.steps.elapsedMs(ast.step)
    case "OrderField":
      return orderValue(scope.order, ast.path)
    case "Arithmetic":
      return arithmeticValue(ast.operator, valueOf(ast.left, scope, onMissing), valueOf(ast.right, scope, onMissing))
    case "Not":
      return !isTruthy(valueOf(ast.operand, scope, onMissing))
    case "Logical":
      return ast.operator === "&&"
        ? isTruthy(valueOf(ast.left, scope, onMissing)) && isTruthy(valueOf(ast.right, scope, onMissing))
        : isTruthy(valueOf(ast.left, scope, onMissing)) || isTruthy(valueOf(ast.right, scope, onMissing))
    case "Compare":
      return compareValues(ast.operator, valueOf(ast.left, scope, onMissing), valueOf(ast.right, scope, onMissing))
  }
}

const asUndefined: OnMissing = () => undefined

/**
 * The value of an expression: a scalar, a looked-up result value, or `undefined` for an unknown
 * name (and for a counter the scope has no value for: `tryEvaluateCondition` reports that one).
 */
export const evaluateValue = (ast: ConditionAst, scope: ConditionScope): unknown => valueOf(ast, scope, asUndefined)

/**
 * Whether a condition holds for the given results. Never throws. For conditions without counters
 * (a counter the scope has no value for reads as missing, so its comparisons are false); the engine
 * evaluates with `tryEvaluateCondition`.
 */
export const evaluateCondition = (ast: ConditionAst, scope: ConditionScope): boolean => isTruthy(evaluateValue(ast, scope))

/**
 * Whether a condition holds, or an error when it reads a counter the scope has no value for:
 * a transition is never taken (or skipped) on a counter nobody read. `&&` and `||` stop early, so
 * a counter behind a decided operand is not needed. Never throws.
 */
export const tryEvaluateCondition = (ast: ConditionAst, scope: ConditionScope): Result.Result<boolean, ConditionEvaluationError> => {
  try {
    return Result.succeed(
      isTruthy(
        valueOf(ast, scope, (counter) => {
          throw new MissingCounter(counter)
        })
      )
    )
  } catch (error) {
    if (!(error instanceof MissingCounter)) throw error
    const why = scope.counters === undefined ? "no counter source is configured" : "the counter source has no value for it"
    return Result.fail(new ConditionEvaluationError({ message: `counter ${error.name} has no value (${why})`, counter: error.name }))
  }
}
