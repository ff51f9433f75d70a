import type { ActionField, ConditionAst, Counter, Name, OrderField, StepFlag } from "./ConditionAst.js"

/** A leaf of a condition that reads something: a result field, a counter, a step or the job order. */
export type ConditionReference = Name | ActionField | Counter | StepFlag | OrderField

/** Every reference of a condition, left to right, repeats included. */
export const referencesIn = (ast: ConditionAst): ReadonlyArray<ConditionReference> => {
  const found: Array<ConditionReference> = []
  const walk = (node: ConditionAst): void => {
    switch (node._tag) {
      case "Literal":
        return
      case "Not":
        return walk(node.operand)
      case "Logical":
      case "Compare":
      case "Arithmetic":
        walk(node.left)
        return walk(node.right)
      default:
        found.push(node)
    }
  }
  walk(ast)
  return found
}

/** What a condition reads, each once, in the order it first appears. */
export interface ConditionReads {
  /** Actions read as `action.field`. */
  readonly actions: ReadonlyArray<string>
  /** Bare names: fields of any action's result. */
  readonly names: ReadonlyArray<string>
  readonly counters: ReadonlyArray<string>
  /** Steps read as `Step.X` or `Step.T`. */
  readonly steps: ReadonlyArray<string>
  /** Job order field paths (`order.Priority` is `["Priority"]`). */
  readonly orderFields: ReadonlyArray<ReadonlyArray<string>>
}

/** What a condition reads: for re-evaluating it when any of these changes, and for checking its names. */
export const conditionReads = (ast: ConditionAst): ConditionReads => {
  const actions = new Set<string>()
  const names = new Set<string>()
  const counters = new Set<string>()
  const steps = new Set<string>()
  const orderFields = new Map<string, ReadonlyArray<string>>()
  for (const ref of referencesIn(ast)) {
    if (ref._tag === "ActionField") actions.add(ref.action)
    else if (ref._tag === "Name") names.add(ref.name)
    else if (ref._tag === "Counter") counters.add(ref.name)
    else if (ref._tag === "StepFlag") steps.add(ref.step)
    else orderFields.set(JSON.stringify(ref.path), ref.path)
  }
  return { actions: [...actions], names: [...names], counters: [...counters], steps: [...steps], orderFields: [...orderFields.values()] }
}
