import { Effect, Option, Context, Layer } from "effect"
import type { ConnectionError, InvalidInput, WrongType } from "./Errors.js"
import { validateNonNegativeInteger } from "./Input.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"
import { command } from "./RawDoor.js"

/**
 * The job acceptance limit per scope (`jobacceptance:{scope}`): how many job orders
 * a scope accepts. The put script enforces it; this DAO only stores it.
 */
export class JobAcceptanceDao extends Context.Service<JobAcceptanceDao>()("@microdcs/store/JobAcceptanceDao", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    /** The stored limit, or none when the scope has no limit configured. */
    const get = (scope: string): Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("jobAcceptance", { scope })
        const stored = yield* typedCommand(valkey, "get acceptance limit", key, "string", (c) => c.get(key))
        if (stored === null) return Option.none()
        // Only set() writes this key; anything but an integer is corruption, not a limit of 0.
        if (!/^\d+$/.test(stored)) return yield* Effect.die(new Error(`${key} holds '${stored}', not an integer limit`))
        return Option.some(Number(stored))
      })

    const set = (scope: string, limit: number): Effect.Effect<void, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("jobAcceptance", { scope })
        yield* validateNonNegativeInteger("limit", limit)
        yield* command(valkey, "set acceptance limit", (c) => c.set(key, String(limit)))
      })

    /** Removes the limit; `true` when one was set. */
    const clear = (scope: string): Effect.Effect<boolean, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("jobAcceptance", { scope })
        return (yield* command(valkey, "clear acceptance limit", (c) => c.del(key))) === 1
      })

    return { get, set, clear } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
