import { Effect, Context, Layer } from "effect"
import type { ConnectionError, InvalidInput } from "./Errors.js"
import { validatePositiveMs } from "./Input.js"
import { Valkey } from "./Valkey.js"
import { command } from "./RawDoor.js"

/** One stream consumer: its stream kind, consumer group and name. */
export interface ConsumerIdentity {
  readonly kind: string
  readonly group: string
  readonly consumer: string
}

/** The heartbeat of one consumer, with its key and lifetime checked once. */
export interface ConsumerHeartbeat {
  /** Writes or renews this consumer's heartbeat for another `ttlMs`. */
  readonly beat: Effect.Effect<void, ConnectionError>
  /** Removes it on shutdown, so others take over what this consumer leaves pending without waiting. */
  readonly forget: Effect.Effect<void, ConnectionError>
  /**
   * Of `consumers` (names in the same kind and group), those without a heartbeat, in one round
   * trip. A name no key can be built for has no heartbeat either, but is not reported: it is no
   * poller, and its entries are left to the idle-time takeover. A heartbeat key of another type
   * counts as none (MGET reads it as nil).
   */
  readonly dead: (consumers: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>, ConnectionError>
}

/**
 * Consumers' liveness (`poller:heartbeat:{kind}:{group}:{consumer}`): a string with a short
 * lifetime that a consumer renews while it runs. A consumer of the group whose key is gone has
 * died (or stopped), so its pending entries can be taken over at once instead of after the long
 * idle time that protects live but slow consumers.
 */
export class ConsumerHeartbeats extends Context.Service<ConsumerHeartbeats>()("@microdcs/store/ConsumerHeartbeats", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    /** The heartbeat of `identity`, living `ttlMs` after each beat; bad parts are `InvalidInput`. */
    const of = (identity: ConsumerIdentity, ttlMs: number): Effect.Effect<ConsumerHeartbeat, InvalidInput> =>
      Effect.gen(function* () {
        const own = yield* valkey.key("pollerHeartbeat", identity)
        yield* validatePositiveMs("ttlMs", ttlMs)
        const keyOf = (consumer: string) => valkey.keys.key("pollerHeartbeat", { kind: identity.kind, group: identity.group, consumer })

        const dead = (consumers: ReadonlyArray<string>) => {
          const known = consumers.flatMap((consumer) => {
            const key = keyOf(consumer)
            return typeof key === "string" ? [{ consumer, key }] : []
          })
          if (known.length === 0) return Effect.succeed([])
          return command(valkey, "MGET consumer heartbeats", (c) => c.mget(...known.map((k) => k.key)))
            .pipe(Effect.map((values) => known.filter((_, i) => values[i] === null).map((k) => k.consumer)))
        }

        return {
          // The value is only for operators (when it was written); liveness is the key's existence.
          beat: command(valkey, "SET consumer heartbeat", (c) => c.set(own, String(Date.now()), "PX", ttlMs)).pipe(Effect.asVoid),
          forget: command(valkey, "DEL consumer heartbeat", (c) => c.del(own)).pipe(Effect.asVoid),
          dead
        } satisfies ConsumerHeartbeat
      })

    return { of } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
