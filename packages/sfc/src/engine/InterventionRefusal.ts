import { Data } from "effect"
import type { InterventionKind } from "./InterventionInput.js"

/**
 * Why an intervention is refused. `invalid`: the input itself is wrong (no reason, an ambiguous
 * skip, a transition out of a branch); `unknown`: it names a step, action or transition the
 * recipe does not have; `state`: the job's state does not allow it now (it ended, is paused, the
 * step is not active, the action is not open).
 */
export type InterventionProblemKind = "invalid" | "unknown" | "state"

export interface InterventionProblem {
  readonly kind: InterventionProblemKind
  readonly message: string
}

/** The order in which a refusal's kind is chosen when it has problems of several kinds. */
const precedence: ReadonlyArray<InterventionProblemKind> = ["invalid", "unknown", "state"]

/**
 * An intervention the engine refused, listing every problem; nothing was changed. `kind` is the
 * first of `invalid`, `unknown`, `state` among the problems (a caller maps it to an exit code).
 */
export class InterventionRefused extends Data.TaggedError("InterventionRefused")<{
  readonly intervention: InterventionKind
  readonly problems: ReadonlyArray<InterventionProblem>
  readonly message: string
}> {
  get kind(): InterventionProblemKind {
    return precedence.find((k) => this.problems.some((p) => p.kind === k)) ?? "state"
  }
}

export const refusalOf = (intervention: InterventionKind, problems: ReadonlyArray<InterventionProblem>): InterventionRefused =>
  new InterventionRefused({ intervention, problems, message: `${intervention} refused: ${problems.map((p) => p.message).join("; ")}` })

export const invalid = (message: string): InterventionProblem => ({ kind: "invalid", message })
export const unknown = (message: string): InterventionProblem => ({ kind: "unknown", message })
export const notNow = (message: string): InterventionProblem => ({ kind: "state", message })
