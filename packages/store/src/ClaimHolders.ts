import { Effect, Context, Layer } from "effect"
import type { ConnectionError, InvalidInput } from "./Errors.js"
import { validatePositiveMs } from "./Input.js"
import { command } from "./RawDoor.js"
import { Valkey } from "./Valkey.js"

/** The liveness of one dedupe claim holder, with its key and lifetime checked once. */
export interface ClaimHolderLiveness {
  readonly holder: string
  /** Writes or renews the liveness key for another `ttlMs`. */
  readonly beat: Effect.Effect<void, ConnectionError>
  /** Removes it on shutdown (every claim given back or done), so nothing waits for it to expire. */
  readonly forget: Effect.Effect<void, ConnectionError>
}

/**
 * Liveness of dedupe claim holders (`ce:holder:{holder}`): a string with a short lifetime that a
 * holder (one per running process) renews while it runs, independently of how long its handlers
 * take. A claim whose token names a holder (`claimToken`) is taken over by a waiting duplicate as
 * soon as that key is gone (`DedupeStore.claim`), instead of after the whole lease.
 */
export class ClaimHolders extends Context.Service<ClaimHolders>()("@microdcs/store/ClaimHolders", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    /** The liveness of `holder`, living `ttlMs` after each beat; a bad holder or lifetime is `InvalidInput`. */
    const of = (holder: string, ttlMs: number): Effect.Effect<ClaimHolderLiveness, InvalidInput> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("dedupeHolder", { holder })
        yield* validatePositiveMs("ttlMs", ttlMs)
        // The value is only for operators: since when the holder lives. It stays the same at every
        // beat, so a renewal changes nothing but the key's lifetime; liveness is the key's existence.
        const since = String(Date.now())
        return {
          holder,
          beat: command(valkey, "SET claim holder liveness", (c) => c.set(key, since, "PX", ttlMs)).pipe(Effect.asVoid),
          forget: command(valkey, "DEL claim holder liveness", (c) => c.del(key)).pipe(Effect.asVoid)
        } satisfies ClaimHolderLiveness
      })

    return { of } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
