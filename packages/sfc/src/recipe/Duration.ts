import { Result, Schema } from "effect"

/**
 * Durations in a recipe (`MaxDuration`, `MaxJobDuration`): a positive whole number and a unit,
 * no spaces: `250ms`, `30s`, `5min`, `2h`. At most nine digits, so every duration is a safe
 * integer of milliseconds; zero is refused (a limit of nothing is a mistake, not a wish).
 */

const msPerUnit: Readonly<Record<string, number>> = { ms: 1, s: 1_000, min: 60_000, h: 3_600_000 }

/** The syntax, anchored; Unicode mode, so the published JSON Schema carries it as its `pattern`. */
export const durationPattern = /^([1-9][0-9]{0,8})(ms|s|min|h)$/u

const durationWords = 'a duration: a positive whole number and ms, s, min or h, no space ("250ms", "30s", "5min", "2h")'

/** A recipe duration as text; its value is `parseDuration`'s. */
export const Duration = Schema.String.check(Schema.isPattern(durationPattern, { expected: durationWords })).annotate({
  description: durationWords
})

/** The milliseconds a duration text stands for, or why it is not one. */
export const parseDuration = (text: string): Result.Result<number, string> => {
  const match = durationPattern.exec(text)
  if (match === null) return Result.fail(`${JSON.stringify(text)} is not ${durationWords}`)
  return Result.succeed(Number(match[1]) * msPerUnit[match[2]!]!)
}

/** The milliseconds of a duration, `undefined` for none (or one that is no duration: validation refuses it). */
export const durationMs = (text: string | undefined): number | undefined =>
  text === undefined ? undefined : Result.getOrUndefined(parseDuration(text))
