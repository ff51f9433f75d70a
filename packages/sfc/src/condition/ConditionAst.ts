/**
 * The syntax tree of a transition condition. Values are JSON scalars only: a condition can read
 * action results but never build objects, call anything or run code from a recipe.
 */
export type ConditionAst =
  | Literal
  | Name
  | ActionField
  | Counter
  | StepFlag
  | OrderField
  | Not
  | Logical
  | Compare
  | Arithmetic

/** A duration literal (`5s`, `250ms`, `2min`, `1h`) is a number of milliseconds. */
export interface Literal {
  readonly _tag: "Literal"
  readonly value: boolean | number | string
}

/** A bare `field`: looked up in the results of every action of the step, later actions win. */
export interface Name {
  readonly _tag: "Name"
  readonly name: string
}

/** `action.field` (or `"verify-2".ok` for a name that is not a word): looked up in the result of one action. */
export interface ActionField {
  readonly _tag: "ActionField"
  readonly action: string
  readonly field: string
}

/**
 * `counter.nok_torque_1h`: a journal counter's current value, which the runtime
 * reads before the core evaluates the transition. `counter` before a `.` is always a counter
 * (`counter."nok-1h"` for a name with other characters); an action called `counter` is read as
 * `"counter".field`.
 */
export interface Counter {
  readonly _tag: "Counter"
  readonly name: string
}

/**
 * `Press.X` (the step is active) or `Press.T` (ms the step has been active in its current
 * activation; after it was left, the length of its last one; 0 if never active): IEC 61131-3's
 * step flag and step time. `X`/`T` after a step's name only; after an action's name they are fields.
 */
export interface StepFlag {
  readonly _tag: "StepFlag"
  readonly step: string
  readonly flag: "X" | "T"
}

/**
 * `order.Priority`, `order.JobOrderParameters.0.Value`: a field of the job order as the MES sent
 * it. Own properties only, arrays by index; anything missing reads as missing.
 */
export interface OrderField {
  readonly _tag: "OrderField"
  readonly path: ReadonlyArray<string>
}

export interface Not {
  readonly _tag: "Not"
  readonly operand: ConditionAst
}

export interface Logical {
  readonly _tag: "Logical"
  readonly operator: "&&" | "||"
  readonly left: ConditionAst
  readonly right: ConditionAst
}

export type CompareOperator = "==" | "!=" | "<" | "<=" | ">" | ">="

export interface Compare {
  readonly _tag: "Compare"
  readonly operator: CompareOperator
  readonly left: ConditionAst
  readonly right: ConditionAst
}

export type ArithmeticOperator = "+" | "-" | "*" | "/"

/** Numbers only: any other operand, a division by zero or a result out of range reads as missing. */
export interface Arithmetic {
  readonly _tag: "Arithmetic"
  readonly operator: ArithmeticOperator
  readonly left: ConditionAst
  readonly right: ConditionAst
}

export const arithmeticOperators: ReadonlyArray<ArithmeticOperator> = ["+", "-", "*", "/"]

export const compareOperators: ReadonlyArray<CompareOperator> = ["==", "!=", "<", "<=", ">", ">="]

/** Words that are literals when they stand alone; `always` is a second spelling of `true`. */
export const keywords: ReadonlyMap<string, boolean> = new Map([
  ["true", true],
  ["always", true],
  ["false", false]
])

export const literal = (value: boolean | number | string): Literal => ({ _tag: "Literal", value })
export const name = (name: string): Name => ({ _tag: "Name", name })
export const actionField = (action: string, field: string): ActionField => ({ _tag: "ActionField", action, field })
export const counterRef = (name: string): Counter => ({ _tag: "Counter", name })
export const stepFlag = (step: string, flag: "X" | "T"): StepFlag => ({ _tag: "StepFlag", step, flag })
export const orderField = (path: ReadonlyArray<string>): OrderField => ({ _tag: "OrderField", path })
export const not = (operand: ConditionAst): Not => ({ _tag: "Not", operand })
export const logical = (operator: "&&" | "||", left: ConditionAst, right: ConditionAst): Logical => ({
  _tag: "Logical",
  operator,
  left,
  right
})
export const compare = (operator: CompareOperator, left: ConditionAst, right: ConditionAst): Compare => ({
  _tag: "Compare",
  operator,
  left,
  right
})
export const arithmetic = (operator: ArithmeticOperator, left: ConditionAst, right: ConditionAst): Arithmetic => ({
  _tag: "Arithmetic",
  operator,
  left,
  right
})
