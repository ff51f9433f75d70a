import { Clock, Duration, Effect, Result } from "effect"
import type { Lease } from "@microdcs/store"
import type { ResolvedPublisherOptions } from "./PublisherOptions.js"

type LeaseOptions = Pick<ResolvedPublisherOptions, "instanceId" | "leaseTtlMs" | "renewIntervalMs">

const errorText = (e: { readonly _tag: string; readonly message?: string }) => `${e._tag}: ${e.message ?? ""}`

/**
 * Takes the lease; `true` when this instance holds it now. A lease that already names this
 * instance (a renew that failed only on our side, or a restart with the same instance id) is
 * taken back with `renew`, because `acquire` is not reentrant. A store failure is "not now".
 */
export const tryAcquire = (lease: Lease, options: LeaseOptions): Effect.Effect<boolean> =>
  lease.acquire(options.instanceId, options.leaseTtlMs).pipe(
    Effect.flatMap((acquired) => (acquired ? Effect.succeed(true) : lease.renew(options.instanceId, options.leaseTtlMs))),
    Effect.catch((e) =>
      Effect.logWarning("publisher: cannot take the lease now").pipe(Effect.annotateLogs({ error: errorText(e) }), Effect.as(false))
    )
  )

/**
 * Renews the lease every third of its TTL and returns as soon as it is lost, which ends the
 * active session at once. A renew that fails (store down, no reply in time) is retried on the
 * next tick only while that tick still comes before the lease would run out; otherwise the
 * publisher stops first, because another instance may take over at expiry.
 *
 * @param heldSince when the last successful acquire or renew was SENT (the lease runs from then at the latest)
 */
export const holdLease = (lease: Lease, options: LeaseOptions, heldSince: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    let validUntil = heldSince + options.leaseTtlMs
    for (;;) {
      yield* Effect.sleep(Duration.millis(options.renewIntervalMs))
      const sentAt = yield* Clock.currentTimeMillis
      const renewed = yield* lease.renew(options.instanceId, options.leaseTtlMs).pipe(
        Effect.timeout(Duration.millis(options.renewIntervalMs)),
        Effect.result
      )
      if (Result.isSuccess(renewed) && renewed.success) {
        validUntil = sentAt + options.leaseTtlMs
        continue
      }
      if (Result.isSuccess(renewed)) return yield* Effect.logWarning("publisher: lease lost to another instance; stopping")
      const now = yield* Clock.currentTimeMillis
      if (now + options.renewIntervalMs >= validUntil) {
        return yield* Effect.logWarning("publisher: cannot renew the lease before it runs out; stopping").pipe(
          Effect.annotateLogs({ error: errorText(renewed.failure) })
        )
      }
      yield* Effect.logWarning("publisher: lease renewal failed; retrying").pipe(Effect.annotateLogs({ error: errorText(renewed.failure) }))
    }
  })
