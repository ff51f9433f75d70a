import { Data } from "effect"

/** A condition that does not parse; `position` is the 0-based character offset of the problem. */
export class ConditionError extends Data.TaggedError("ConditionError")<{
  readonly message: string
  readonly position: number
}> {}

/**
 * A condition could not be evaluated: it names a counter the scope has no value for (no counter
 * source, or the source does not know the counter or its search-key value).
 */
export class ConditionEvaluationError extends Data.TaggedError("ConditionEvaluationError")<{
  readonly message: string
  readonly counter: string
}> {}
