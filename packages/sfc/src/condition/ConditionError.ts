import { Data } from "effect"

/** A condition that does not parse; `position` is the 0-based character offset of the problem. */
export class ConditionError extends Data.TaggedError("ConditionError")<{
  readonly message: string
  readonly position: number
}> {}
