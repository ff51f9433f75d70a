/**
 * The syntax tree of a transition condition. Values are JSON scalars only: a condition can read
 * action results but never build objects, call anything or run code from a recipe.
 */
export type ConditionAst =
  | Literal
  | Name
  | ActionField
  | Counter
  | Not
  | Logical
  | Compare

export interface Literal {
  readonly _tag: "Literal"
  readonly value: boolean | number | string
}

/** A bare `field`: looked up in the results of every action of the step, later actions win. */
export interface Name {
  readonly _tag: "Name"
  readonly name: string
}

/** `action.field`: looked up in the result of one action. */
export interface ActionField {
  readonly _tag: "ActionField"
  readonly action: string
  readonly field: string
}

/**
 * `counter.nok_torque_1h`: a journal counter's current value, which the runtime
 * reads before the core evaluates the transition. `counter` before a `.` is always a counter, so
 * an action called `counter` cannot be read as `counter.field`.
 */
export interface Counter {
  readonly _tag: "Counter"
  readonly name: string
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
