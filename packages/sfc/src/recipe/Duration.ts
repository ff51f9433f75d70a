import { Result, Schema } from "effect"
import { durationUnits } from "../condition/index.js"

/**
 * Durations in a recipe (`MaxDuration`, `MaxJobDuration`): a positive whole number and a unit,
 * no spaces: `250ms`, `30s`, `5min`, `2h` (the units of the conditions' duration literals). At most nine digits, so every duration is a safe
 * integer of milliseconds; zero is refused (a limit of nothing is a mistake, not a wish).
 */

/** The syntax, anchored, with the condition language's units; Unicode mode, so the published JSON Schema carries it as its `pattern`. */
export const durationPattern = new RegExp(`^([1-9][0-9]{0,8})(${[...durationUnits.keys()].join("|")})$`, "u")

const durationWords = 'a duration: a positive whole number and ms, s, min or h, no space ("250ms", "30s", "5min", "2h")'

/** A recipe duration as text; its value is `parseDuration`'s. */
export const Duration = Schema.String.check(Schema.isPattern(durationPattern, { expected: durationWords })).annotate({
  description: durationWords
})

/** The milliseconds a duration text stands for, or why it is not one. */
export const parseDuration = (text: string): Result.Result<number, string> => {
  const match = durationPattern.exec(text)
  if (match === null) return Result.fail(`${JSON.stringify(text)} is not ${durationWords}`)
  return Result.succeed(Number(match[1]) * durationUnits.get(match[2]!)!)
}

/** The milliseconds of a duration, `undefined` for none (or one that is no duration: validation refuses it). */
export const durationMs = (text: string | undefined): number | undefined =>
  text === undefined ? undefined : Result.getOrUndefined(parseDuration(text))
