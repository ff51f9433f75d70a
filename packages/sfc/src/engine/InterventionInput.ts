import type { Origin } from "@microdcs/job-state"

/**
 * An operator's manual intervention in a running recipe (ISA-88's operator intervention / manual
 * control): skip a step, force a transition, set an action's result, retry an open action. Every
 * one is audited: who (`origin`: `cli:alice@host`, a console token's role, an MES source) and why
 * (`reason`, required). Both go into the state's `interventions` and into the intervention's node
 * of the execution log; an input that is refused changes nothing (`InterventionRefusal.ts`).
 */
export interface InterventionAudit {
  /** Who asked for it. */
  readonly origin: Origin
  /** Why: a comment the operator must give (1 to {@link MAX_REASON_LENGTH} characters). */
  readonly reason: string
}

/** The longest reason kept: the same bound as an origin's comment. */
export const MAX_REASON_LENGTH = 500

/**
 * Skip an active step: its open actions are abandoned (a push command already sent is not
 * stopped: a later reply finds no action and is ignored) and the step is left as if its transition
 * had fired, without evaluating any condition. The target: `target` when given (one of the step's
 * outgoing transitions must lead there), otherwise the step's only outgoing transition; a step
 * with none ends as a final step does; a step on a branch path goes on along its path.
 */
export interface SkipStepInput extends InterventionAudit {
  readonly type: "skip-step"
  readonly step: string
  readonly target?: string | undefined
}

/** A transition of the recipe: by its source and target names, or by its place in `Transitions` (from 0). */
export type TransitionRef = { readonly source: string; readonly target: string } | { readonly index: number }

/**
 * Force a transition out of an active step regardless of its condition: the step is left (its open
 * actions abandoned, as for a skip) and the transition's target entered.
 */
export interface ForceTransitionInput extends InterventionAudit {
  readonly type: "force-transition"
  readonly transition: TransitionRef
}

/**
 * Set the result of an action of an active step, open or done: an open action completes with it,
 * as if the station had replied; the step's transitions are then evaluated as after a reply.
 */
export interface SetResultInput extends InterventionAudit {
  readonly type: "set-result"
  readonly action: string
  /** Any JSON value (`null` for none). */
  readonly result: unknown
}

/** Retry an open action (a station that was down is back): see `RetryAction.ts`. */
export interface RetryInput extends InterventionAudit {
  readonly type: "retry"
  readonly action: string
}

export type InterventionInput = SkipStepInput | ForceTransitionInput | SetResultInput | RetryInput

export type InterventionKind = InterventionInput["type"]
