import { Effect, Option, Context, Layer } from "effect"
import type { ConnectionError, InvalidInput, WrongType } from "./Errors.js"
import { DEFAULT_LEASE_MS, leaseOn, type Lease } from "./Lease.js"
import { Valkey } from "./Valkey.js"

/**
 * The post-start lease per configuration (`lock:poststart:{configId}`):
 * whoever acquires it runs the post-start work for that configuration; the others skip.
 */
export class StartLease extends Context.Service<StartLease>()("@microdcs/store/StartLease", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    const lease = (configId: string): Effect.Effect<Lease, InvalidInput> =>
      valkey.key("startLease", { configId }).pipe(Effect.map((key) => leaseOn(valkey, key)))

    /** SET NX with TTL (default 30 s): `true` when `holder` now holds the lease. */
    const acquire = (
      configId: string,
      holder: string,
      ttlMs: number = DEFAULT_LEASE_MS
    ): Effect.Effect<boolean, WrongType | InvalidInput | ConnectionError> =>
      lease(configId).pipe(Effect.flatMap((l) => l.acquire(holder, ttlMs)))

    /** Deletes the lease only when `holder` holds it. */
    const release = (configId: string, holder: string): Effect.Effect<boolean, WrongType | InvalidInput | ConnectionError> =>
      lease(configId).pipe(Effect.flatMap((l) => l.release(holder)))

    /** Extends the lease to `ttlMs` from now, only while `holder` holds it. */
    const renew = (
      configId: string,
      holder: string,
      ttlMs: number = DEFAULT_LEASE_MS
    ): Effect.Effect<boolean, WrongType | InvalidInput | ConnectionError> =>
      lease(configId).pipe(Effect.flatMap((l) => l.renew(holder, ttlMs)))

    const holder = (configId: string): Effect.Effect<Option.Option<string>, WrongType | InvalidInput | ConnectionError> =>
      lease(configId).pipe(Effect.flatMap((l) => l.holder))

    return { acquire, release, renew, holder } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
