import { Result } from "effect"
import { countersIn } from "../condition/conditionCounters.js"
import type { ConditionEvaluationError } from "../condition/ConditionError.js"
import { tryEvaluateCondition } from "../condition/evaluateCondition.js"
import { type ActionResult, chooseTransition, type ConditionContext, type RecipeIndex } from "./RecipeIndex.js"

/**
 * Counters in transition conditions without I/O in the core. The core cannot
 * read a counter, so a call that reaches a transition naming counters stops and says what it
 * needs (`CounterNeed`); the runtime reads them and calls again with the values. The core is
 * deterministic, so the k-th counter evaluation of the repeated call is the same evaluation, and
 * its values are `counters[k]`.
 */

/**
 * The values one evaluation read: counter name → value. `null`: there is no counter source, so
 * every counter lacks a value (and the job fails saying so).
 */
export type CounterValues = Readonly<Record<string, number>> | null

/** What the core needs before it can evaluate one source's transitions. */
export interface CounterNeed {
  /** The step or branch whose outgoing transitions are evaluated. */
  readonly source: string
  /** The counters those transitions name, each once. */
  readonly counters: ReadonlyArray<string>
  /** The results they are evaluated against: action → result, in recipe order. */
  readonly results: Readonly<Record<string, unknown>>
}

/** Thrown inside the core and caught by `start`/`step`: the call's draft is dropped. */
export class CountersNeeded {
  constructor(readonly need: CounterNeed) {}
}

/** The counter values of one core call, handed out in evaluation order. */
export class CounterReadings {
  private next = 0
  constructor(private readonly values: ReadonlyArray<CounterValues>) {}

  /**
   * The values of the next evaluation (`undefined`: no counter source); throws `CountersNeeded`
   * when the runtime has not read them yet.
   */
  take(need: CounterNeed): Readonly<Record<string, number>> | undefined {
    const values = this.values[this.next]
    if (values === undefined) throw new CountersNeeded(need)
    this.next += 1
    return values ?? undefined
  }
}

interface CounterCondition {
  readonly counters: ReadonlyArray<string>
  /** Undefined when the condition names no counter or does not parse: `RecipeIndex.condition` evaluates it. */
  readonly evaluate?: (
    results: ReadonlyArray<ActionResult>,
    counters: Readonly<Record<string, number>> | undefined,
    context: ConditionContext | undefined
  ) => Result.Result<boolean, ConditionEvaluationError>
}

const none: CounterCondition = { counters: [] }
const compiled = new WeakMap<RecipeIndex, Map<string, CounterCondition>>()

const counterCondition = (index: RecipeIndex, text: string): CounterCondition => {
  let byText = compiled.get(index)
  if (!byText) compiled.set(index, (byText = new Map()))
  let condition = byText.get(text)
  if (!condition) {
    const ast = index.parse(text)
    if (ast === undefined) condition = none
    else {
      const counters = countersIn(ast)
      condition =
        counters.length === 0 ? none : { counters, evaluate: (results, values, context) => tryEvaluateCondition(ast, { results, counters: values, ...context }) }
    }
    byText.set(text, condition)
  }
  return condition
}

/** The counters the given transitions name, each once, in order: none for most recipes. */
export const countersNamed = (index: RecipeIndex, candidates: ReadonlyArray<{ readonly Condition: string }>): ReadonlyArray<string> => {
  const names = new Set<string>()
  for (const t of candidates) for (const name of counterCondition(index, t.Condition).counters) names.add(name)
  return [...names]
}

// fromEntries defines own properties, so an action called `__proto__` stays a plain key.
/** The results as the counter source sees them: action → result, later entries win. */
export const resultsRecord = (results: ReadonlyArray<ActionResult>): Readonly<Record<string, unknown>> =>
  Object.fromEntries(results.map((r) => [r.action, r.result]))

/**
 * Picks the transition out of `source` among `candidates` like `chooseTransition`: lowest
 * Priority that holds wins, ties in recipe order, `undefined` when none holds. At the first
 * candidate that names counters, the values of the counters it and the candidates after it name
 * come from the call's readings (or the call stops to ask for them: one read per evaluation, none
 * when a transition without counters wins first). A counter without a value is an error the
 * caller fails the job with.
 */
export const chooseTransitionOf = <T extends { readonly Condition: string; readonly Priority: number; readonly order: number }>(
  index: RecipeIndex,
  readings: CounterReadings,
  source: string,
  candidates: ReadonlyArray<T>,
  results: ReadonlyArray<ActionResult>,
  context?: ConditionContext
): Result.Result<T | undefined, ConditionEvaluationError> => {
  // The common case (no counters) allocates nothing more than `chooseTransition` does.
  if (!candidates.some((t) => counterCondition(index, t.Condition).counters.length > 0)) return Result.succeed(chooseTransition(index, candidates, results, context))
  const ordered = [...candidates].sort((a, b) => a.Priority - b.Priority || a.order - b.order)
  let values: { readonly read: Readonly<Record<string, number>> | undefined } | undefined
  for (const [at, t] of ordered.entries()) {
    const condition = counterCondition(index, t.Condition)
    if (!condition.evaluate) {
      if (index.condition(t.Condition)(results, context)) return Result.succeed(t)
      continue
    }
    values ??= { read: readings.take({ source, counters: countersNamed(index, ordered.slice(at)), results: resultsRecord(results) }) }
    const holds = condition.evaluate(results, values.read, context)
    if (Result.isFailure(holds)) return Result.fail(holds.failure)
    if (holds.success) return Result.succeed(t)
  }
  return Result.succeed(undefined)
}
