import { Effect, Option, Context, Layer } from "effect"
import type { ConnectionError, InvalidInput, WrongType } from "./Errors.js"
import { validatePositiveMs, validateText } from "./Input.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"
import { command } from "./RawDoor.js"

/**
 * Correlation pointers (`sfc:correlation:{correlationId}`): a station reply carries
 * only the correlation id of the command it answers, so the engine remembers which job sent it
 * before sending, for as long as a reply may still come.
 */
export class SfcCorrelations extends Context.Service<SfcCorrelations>()("@microdcs/store/SfcCorrelations", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    const pointerKey = (correlationId: string) => valkey.key("sfcCorrelation", { correlationId })

    /** Points `correlationId` at `jobId` for `ttlMs`; a resend of the same command renews it. */
    const remember = (correlationId: string, jobId: string, ttlMs: number): Effect.Effect<void, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* pointerKey(correlationId)
        yield* validateText("jobId", jobId)
        yield* validatePositiveMs("ttlMs", ttlMs)
        yield* command(valkey, "remember correlation", (c) => c.set(key, jobId, "PX", ttlMs))
      })

    /** The job that sent the command, or none once the pointer expired (or never existed). */
    const jobOf = (correlationId: string): Effect.Effect<Option.Option<string>, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* pointerKey(correlationId)
        return Option.fromNullishOr(yield* typedCommand(valkey, "read correlation", key, "string", (c) => c.get(key)))
      })

    /** Removes the pointer; `true` when there was one. */
    const forget = (correlationId: string): Effect.Effect<boolean, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* pointerKey(correlationId)
        return (yield* command(valkey, "forget correlation", (c) => c.del(key))) === 1
      })

    return { remember, jobOf, forget } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
