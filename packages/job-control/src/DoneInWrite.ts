import type { DoneMark } from "@microdcs/store"

/**
 * How a processing lands the done mark of its event with its own write, one round trip fewer
 * than a write and then a mark (see `exactlyOnce`): `mark` builds the mark that keeps the reply
 * of `value` (`undefined` when it cannot be kept so, a reply over the size limit: then the mark
 * follows the processing as before); a write that landed it says so with `landed`, and no
 * separate mark is written. The processing must then return that very `value`: its reply is
 * what a duplicate of the event is answered with.
 */
export interface DoneInWrite<A> {
  readonly mark: (value: A) => DoneMark | undefined
  readonly landed: (mark: DoneMark) => void
}

/** `done` for a processing whose results become the marked values through `toValue`. */
export const doneThrough = <A, B>(done: DoneInWrite<A>, toValue: (result: B) => A): DoneInWrite<B> => ({
  mark: (result) => done.mark(toValue(result)),
  landed: done.landed
})

/**
 * `f` remembering its last call: a result turned into a value to mark before the write and
 * again once the processing returns gives the same value both times (a reply event has a fresh
 * id each time it is built).
 */
export const rememberLast = <A, B>(f: (a: A) => B): ((a: A) => B) => {
  let last: { readonly input: A; readonly output: B } | undefined
  return (input) => {
    if (last === undefined || last.input !== input) last = { input, output: f(input) }
    return last.output
  }
}
