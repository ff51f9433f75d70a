import { Effect, Option, Context, Layer } from "effect"
import { leaseAcquire, leaseRelease, leaseRenew } from "@microdcs/lua-scripts"
import type { ConnectionError, InvalidInput, WrongType } from "./Errors.js"
import { validatePositiveMs, validateText } from "./Input.js"
import { typedCommand, wrongTypeError } from "./TypeGuard.js"
import { Valkey, type ValkeyService } from "./Valkey.js"

/** Default lease lifetime (the post-start lock lives 30 s). */
export const DEFAULT_LEASE_MS = 30_000

type LeaseError = WrongType | InvalidInput | ConnectionError

/**
 * A lease on one string key whose value is the holder id and whose TTL is the lease. Only the
 * holder can renew or release it, so a holder that stalled past its TTL cannot disturb the one
 * that took over.
 */
export interface Lease {
  /** SET NX with TTL: `true` when the caller now holds it. Not reentrant: a held lease gives `false`, even to its holder. */
  readonly acquire: (holder: string, ttlMs?: number) => Effect.Effect<boolean, LeaseError>
  /** Extends the lease to `ttlMs` from now, only while `holder` holds it; `false` when it does not (lost). */
  readonly renew: (holder: string, ttlMs?: number) => Effect.Effect<boolean, LeaseError>
  /** Deletes the lease only when `holder` holds it; `false` (and nothing changed) otherwise. */
  readonly release: (holder: string) => Effect.Effect<boolean, LeaseError>
  /** The current holder, if any. */
  readonly holder: Effect.Effect<Option.Option<string>, WrongType | ConnectionError>
}

/** The lease on `key`. Any key family of string leases works (`startLease`, `publisherLease`). */
export const leaseOn = (valkey: ValkeyService, key: string): Lease => {
  const acquire = (holder: string, ttlMs: number = DEFAULT_LEASE_MS) =>
    Effect.gen(function* () {
      yield* validateText("holder", holder)
      yield* validatePositiveMs("ttlMs", ttlMs)
      const reply = yield* valkey.script(leaseAcquire, { lease: key }, { holder, ttlMs })
      return reply.status === "wrongtype" ? yield* wrongTypeError(reply) : reply.status === "acquired"
    })

  const renew = (holder: string, ttlMs: number = DEFAULT_LEASE_MS) =>
    Effect.gen(function* () {
      yield* validateText("holder", holder)
      yield* validatePositiveMs("ttlMs", ttlMs)
      const reply = yield* valkey.script(leaseRenew, { lease: key }, { holder, ttlMs })
      return reply.status === "wrongtype" ? yield* wrongTypeError(reply) : reply.status === "renewed"
    })

  const release = (holder: string) =>
    Effect.gen(function* () {
      yield* validateText("holder", holder)
      const reply = yield* valkey.script(leaseRelease, { lease: key }, { holder })
      return reply.status === "wrongtype" ? yield* wrongTypeError(reply) : reply.status === "released"
    })

  const holder = typedCommand(valkey, "lease holder", key, "string", (c) => c.get(key)).pipe(Effect.map(Option.fromNullishOr))

  return { acquire, renew, release, holder }
}

/**
 * The publisher's lease (`lock:publisher`): one publisher per island publishes at a time and
 * keeps its lease alive with `renew` well before the TTL runs out.
 */
export class PublisherLease extends Context.Service<PublisherLease>()("@microdcs/store/PublisherLease", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    return leaseOn(valkey, valkey.keys.key("publisherLease", {}) as string)
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
