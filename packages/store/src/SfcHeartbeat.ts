import { Effect, Option, Context, Layer } from "effect"
import type { ConnectionError, InvalidInput, WrongType } from "./Errors.js"
import { validateNonNegativeInteger } from "./Input.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"

/** A stored beat that is no epoch ms (written by hand, or garbled) counts as no beat at all. */
const decodeBeat = (stored: string | null): Option.Option<number> => {
  if (stored === null || !/^\d+$/.test(stored)) return Option.none()
  const at = Number(stored)
  return Number.isSafeInteger(at) ? Option.some(at) : Option.none()
}

/**
 * The timer sweep's heartbeat (`sfc:heartbeat`): the epoch ms of the
 * last sweep of any instance. A sweep that finds it much older than its interval learns the
 * island was down, and readiness learns whether the sweep runs at all.
 */
export class SfcHeartbeat extends Context.Service<SfcHeartbeat>()("@microdcs/store/SfcHeartbeat", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* Effect.orDie(valkey.key("sfcHeartbeat", {}))

    /**
     * Writes `now` and returns the beat it replaced, in one step (`SET ... GET`): of several
     * instances sweeping at once, exactly one sees the old beat, so one handles an outage.
     */
    const swap = (now: number): Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        yield* validateNonNegativeInteger("now", now)
        const previous = yield* typedCommand(valkey, "swap sweep heartbeat", key, "string", (c) => c.set(key, String(now), "GET"))
        return decodeBeat(previous)
      })

    /** The last beat, or none when no sweep wrote one yet. */
    const last: Effect.Effect<Option.Option<number>, WrongType | ConnectionError> = typedCommand(
      valkey,
      "read sweep heartbeat",
      key,
      "string",
      (c) => c.get(key)
    ).pipe(Effect.map(decodeBeat))

    return { swap, last } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
