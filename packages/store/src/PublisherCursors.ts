import { Effect, Option, Context, Layer } from "effect"
import type { ConnectionError, InvalidInput, WrongType } from "./Errors.js"
import { validateStreamId, validateText } from "./Input.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"

/**
 * The publisher's progress: the last change stream id it published per scope
 * (`publisher:cursors`, field = scope) and the publish sequence per scope (`pubseq:{scope}`).
 */
export class PublisherCursors extends Context.Service<PublisherCursors>()("@microdcs/store/PublisherCursors", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const cursorsKey = valkey.keys.key("publisherCursors", {}) as string

    /** The scope is a hash field here, not a key part, but it follows the same rules. */
    const get = (scope: string): Effect.Effect<Option.Option<string>, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        yield* validateText("scope", scope)
        const cursor = yield* typedCommand(valkey, "get publisher cursor", cursorsKey, "hash", (c) => c.hget(cursorsKey, scope))
        return Option.fromNullishOr(cursor)
      })

    /** Every scope's cursor. A Map, so a scope named like an object property stays a plain entry. */
    const getAll: Effect.Effect<ReadonlyMap<string, string>, WrongType | ConnectionError> = typedCommand(
      valkey,
      "get publisher cursors",
      cursorsKey,
      "hash",
      (c) => c.hgetall(cursorsKey)
    ).pipe(Effect.map((all) => new Map(Object.entries(all))))

    const set = (scope: string, streamId: string): Effect.Effect<void, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        yield* validateText("scope", scope)
        yield* validateStreamId("streamId", streamId)
        yield* typedCommand(valkey, "set publisher cursor", cursorsKey, "hash", (c) => c.hset(cursorsKey, scope, streamId))
      })

    /**
     * Sets the scope's cursor to "0", the start of the stream, so the publisher publishes every
     * change still in it again (admin CLI `publisher republish`).
     */
    const rewind = (scope: string): Effect.Effect<void, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        yield* validateText("scope", scope)
        yield* typedCommand(valkey, "rewind publisher cursor", cursorsKey, "hash", (c) => c.hset(cursorsKey, scope, "0"))
      })

    /** The next publish sequence number of a scope: 1 for the first publish. */
    const nextSequence = (scope: string): Effect.Effect<number, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("publishSequence", { scope })
        return yield* typedCommand(valkey, "next publish sequence", key, "string", (c) => c.incr(key))
      })

    return { get, getAll, set, rewind, nextSequence } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
