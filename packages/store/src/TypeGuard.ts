import type { Redis } from "iovalkey"
import { Effect } from "effect"
import type { WrongTypeReply } from "@microdcs/lua-scripts"
import { type ConnectionError, WrongType } from "./Errors.js"
import { isReplyError } from "./FailureKind.js"
import type { ValkeyService } from "./Valkey.js"

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
  valkey
    .command(operation, (c) =>
      run(c).catch((error: unknown) => {
        if (isWrongTypeError(error)) return wrongTypeMarker
        throw error
      })
    )
    .pipe(
      Effect.flatMap((result) =>
        result === wrongTypeMarker
          ? valkey
              .command("type", (c) => c.type(key))
              .pipe(Effect.flatMap((actual) => Effect.fail(new WrongType({ key, expected, actual }))))
          : Effect.succeed(result as A)
      )
    )

/** The typed error of a script's `wrongtype` reply. */
export const wrongTypeError = (reply: WrongTypeReply): WrongType =>
  new WrongType({ key: reply.key, expected: reply.expected, actual: reply.actual })
