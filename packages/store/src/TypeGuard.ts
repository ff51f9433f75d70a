import type { ChainableCommander, Redis } from "iovalkey"
import { Effect } from "effect"
import { type ConnectionError, WrongType } from "./Errors.js"
import { isReplyError } from "./FailureKind.js"
import type { ValkeyService } from "./Valkey.js"
import { command } from "./RawDoor.js"

const wrongTypeMarker: unique symbol = Symbol("wrongtype")

const isWrongTypeError = (error: unknown): boolean => isReplyError(error) && error.message.startsWith("WRONGTYPE")

/**
 * Runs a plain command on `key` and turns a WRONGTYPE reply into a typed {@link WrongType}
 * (a corrupted key is something an operator fixes, not a bug in the caller). The actual type is
 * read only on that rare path.
 */
export const typedCommand = <A>(
  valkey: ValkeyService,
  operation: string,
  key: string,
  expected: string,
  run: (client: Redis) => Promise<A>
): Effect.Effect<A, WrongType | ConnectionError> =>
  command(valkey, operation, (c) =>
      run(c).catch((error: unknown) => {
        if (isWrongTypeError(error)) return wrongTypeMarker
        throw error
      })
    )
    .pipe(Effect.flatMap((result) => (result === wrongTypeMarker ? wrongTypeOf(valkey, key, expected) : Effect.succeed(result as A))))

/** The typed error for `key`, with the type it holds now (read only on this rare path). */
const wrongTypeOf = (valkey: ValkeyService, key: string, expected: string): Effect.Effect<never, WrongType | ConnectionError> =>
  command(valkey, "type", (c) => c.type(key)).pipe(Effect.flatMap((actual) => Effect.fail(new WrongType({ key, expected, actual }))))

/**
 * {@link typedCommand} for one pipelined command per key (one round trip): a WRONGTYPE reply
 * on any of them is a typed {@link WrongType} naming that key; the results come in key order.
 */
export const typedPipeline = <A>(
  valkey: ValkeyService,
  operation: string,
  keys: ReadonlyArray<string>,
  expected: string,
  add: (pipeline: ChainableCommander, key: string) => void
): Effect.Effect<ReadonlyArray<A>, WrongType | ConnectionError> =>
  command(valkey, operation, async (c) => {
      const pipeline = c.pipeline()
      for (const key of keys) add(pipeline, key)
      const results = (await pipeline.exec()) ?? []
      const values: Array<A> = []
      for (const [i, [error, value]] of results.entries()) {
        if (isWrongTypeError(error)) return { wrongTypeAt: keys[i]! }
        if (error) throw error
        values.push(value as A)
      }
      return { values }
    })
    .pipe(Effect.flatMap((r) => ("wrongTypeAt" in r ? wrongTypeOf(valkey, r.wrongTypeAt, expected) : Effect.succeed(r.values))))

// The reply mapping lives with the other write replies; the small DAOs import it from here.
export { wrongTypeError } from "./WriteReplies.js"
