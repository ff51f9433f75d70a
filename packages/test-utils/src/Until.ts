import { Data, Duration, Effect } from "effect"

/** A condition a test waited for did not hold before its deadline. */
export class ConditionNotReached extends Data.TaggedError("ConditionNotReached")<{
  readonly what: string
  readonly within: string
}> {}

export interface UntilOptions {
  /** How long to keep trying (default 10 s: generous, the machine may be loaded). */
  readonly within?: Duration.Input
  /** The pause between tries (default 20 ms). */
  readonly every?: Duration.Input
  /** Names the condition in the failure. */
  readonly what?: string
}

/** A deadline alone (a duration, or a number of milliseconds) stands for `{ within }`. */
export type UntilDeadline = Duration.Input | UntilOptions

const isOptions = (deadline: UntilDeadline): deadline is UntilOptions =>
  typeof deadline === "object" && !Array.isArray(deadline) && !Duration.isDuration(deadline)

/**
 * Runs `effect` again and again until `ok` holds for its value, and returns that value; fails with
 * ConditionNotReached after the deadline instead of hanging. An error of `effect` ends the wait.
 */
export const until = <A, E, R>(effect: Effect.Effect<A, E, R>, ok: (value: A) => boolean, deadline: UntilDeadline = {}) => {
  const { within = "10 seconds", every = "20 millis", what = "condition" } = isOptions(deadline) ? deadline : { within: deadline }
  return Effect.gen(function* () {
    for (;;) {
      const value = yield* effect
      if (ok(value)) return value
      yield* Effect.sleep(every)
    }
  }).pipe(
    Effect.timeoutOrElse({
      duration: within,
      orElse: () => Effect.fail(new ConditionNotReached({ what, within: Duration.format(Duration.fromInputUnsafe(within)) }))
    })
  )
}

/** Runs `check` until it returns a value (anything but `undefined`), and returns it; see `until`. */
export const eventually = <A, E, R>(
  check: Effect.Effect<A | undefined, E, R>,
  deadline?: UntilDeadline
): Effect.Effect<A, E | ConditionNotReached, R> =>
  until(check, (value) => value !== undefined, deadline) as Effect.Effect<A, E | ConditionNotReached, R>
