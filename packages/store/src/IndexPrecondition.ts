import { Context, Effect } from "effect"
import { StateMoved } from "./Errors.js"

/**
 * The read-then-check protocol of the index writes. An index key that depends on a
 * stored value (the old by-state set, the old by-order pointer, the list of the stored scope) is
 * computed by the DAO from a read; the script re-checks the stored value and replies `retry` when
 * it moved. The DAO then reads again, at most {@link MAX_INDEX_RETRIES} times, then `StateMoved`.
 */
export const MAX_INDEX_RETRIES = 5

/**
 * A seam between the DAO's read and the script that re-checks it. Production keeps the no-op
 * default; a test provides one that changes the stored value in between, which makes the
 * `retry` path deterministic instead of a race.
 */
export class IndexReadHook extends Context.Reference<{ readonly afterRead: (documentKey: string, attempt: number) => Effect.Effect<void> }>(
  "@microdcs/store/IndexReadHook",
  { defaultValue: () => ({ afterRead: (_documentKey: string, _attempt: number): Effect.Effect<void> => Effect.void }) }
) {}

/** What one attempt returns when the script replied `retry`. */
export const moved: unique symbol = Symbol("moved")
export type Moved = typeof moved

/** Runs `attempt` (read, hook, script) until it does not report {@link moved}, within the budget. */
export const retryWhileMoved = <A, E, R>(
  key: string,
  attempt: (n: number) => Effect.Effect<A | Moved, E, R>
): Effect.Effect<A, E | StateMoved, R> =>
  Effect.gen(function* () {
    for (let n = 1; n <= MAX_INDEX_RETRIES; n++) {
      const result = yield* attempt(n)
      if (result !== moved) return result as A
    }
    return yield* new StateMoved({ key, attempts: MAX_INDEX_RETRIES })
  })

/** The stored values a write read, after the hook had its turn. */
export const readForWrite = <A, E, R>(key: string, attempt: number, read: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    const value = yield* read
    const hook = yield* IndexReadHook
    yield* hook.afterRead(key, attempt)
    return value
  })
