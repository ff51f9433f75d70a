import { Schema } from "effect"
import { Duration } from "./Duration.js"
import { JsonObject } from "./JsonObject.js"

/**
 * The IEC 61131-3 action qualifiers of recipe schema v1.1.0 and the action fields they use.
 * v1.0.0 knows `N` and `P` only (`Qualifier` in Recipe.ts); v1.1.0 adds the rest for push commands:
 * - `P1` / `P0`: a pulse on step entry (as `P`) / on step exit;
 * - `S`: stored, sent on entry and active across steps until an `R` action resets it;
 * - `R`: reset, sends the `Stop` command of the stored action it `Resets`;
 * - `L`: time limited, its `Stop` goes out after `Limit` or when its step is left, whichever is first;
 * - `SL`: stored and time limited, its `Stop` goes out after `Limit` (or at an `R`);
 * - `D`: delayed by `Delay`, sent only if its step is still active then;
 * - `SD`: stored and delayed, sent after `Delay` even if its step was left, then stored;
 * - `DS`: delayed and stored, sent after `Delay` only if its step is still active, then stored.
 * Only `N` holds its step; every other qualifier's command is sent once, and its reply counts for
 * the step's conditions while the step is still active.
 */

const words = ["N", "P", "P1", "P0", "S", "R", "L", "SL", "D", "SD", "DS"] as const

export const QualifierV1_1 = Schema.Literals(words).annotate({ expected: words.join(" or ") })
export type QualifierV1_1 = typeof QualifierV1_1.Type

/** The command that ends a stored or time-limited action's effect: sent like any command (its own correlation id). */
export const StopCommand = Schema.Struct({
  /** The CloudEvent type of the stop command. */
  TypeId: Schema.NonEmptyString,
  Parameters: Schema.optionalKey(JsonObject)
}).annotate({ identifier: "StopCommand" })
export interface StopCommand extends Schema.Schema.Type<typeof StopCommand> {}

/** The action fields the v1.1.0 qualifiers use. */
export const qualifierFields = {
  /** S, SL, SD, DS, L: the command that stops the action. */
  Stop: Schema.optionalKey(StopCommand),
  /** R: the name of the stored action (S, SL, SD, DS) this action resets. */
  Resets: Schema.optionalKey(Schema.NonEmptyString),
  /** L, SL: how long the action stays active before its stop is sent. */
  Limit: Schema.optionalKey(Duration),
  /** D, SD, DS: how long after step entry the command is sent. */
  Delay: Schema.optionalKey(Duration)
}

/** Qualifiers whose command is stopped later (by `Stop`). */
export const STOPPED: ReadonlySet<string> = new Set(["S", "L", "SL", "SD", "DS"])
/** Qualifiers that stay active after their step is left, until an R action or the job's end. */
export const STORED: ReadonlySet<string> = new Set(["S", "SL", "SD", "DS"])
/** Qualifiers with a `Limit`. */
export const LIMITED: ReadonlySet<string> = new Set(["L", "SL"])
/** Qualifiers with a `Delay`. */
export const DELAYED: ReadonlySet<string> = new Set(["D", "SD", "DS"])
