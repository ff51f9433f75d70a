import { randomUUID } from "node:crypto"
import { Duration, Effect, type Scope } from "effect"
import { ClaimHolders, type ConnectionError, type InvalidInput } from "@microdcs/store"

/** How often a claim holder renews its liveness key: independent of how long any handler takes. */
export const CLAIM_HOLDER_BEAT_MS = 1000
/** How long the key lives after each renewal: 3 renewals, so one late renewal is not a death. */
export const CLAIM_HOLDER_TTL_MS = 3000

/**
 * Makes this process a dedupe claim holder for the current scope and returns its id, for
 * `exactlyOnce({ holder })`. The id is `{name}.{random}`: a process restarted under the same
 * name (instance id) is another holder, so it never keeps a dead run's claims alive. The
 * liveness key is written before this returns (no claim ever names a holder without one), then
 * renewed every second on a fiber of its own; when the scope closes the renewals stop and the
 * key is removed. If the process dies, the key expires within 3 s, and a waiting duplicate
 * takes over its claims instead of waiting out their lease.
 */
export const keepClaimHolder = (name: string): Effect.Effect<string, InvalidInput | ConnectionError, ClaimHolders | Scope.Scope> =>
  Effect.gen(function* () {
    const liveness = yield* (yield* ClaimHolders).of(`${name}.${randomUUID()}`, CLAIM_HOLDER_TTL_MS)
    const annotate = Effect.annotateLogs({ holder: liveness.holder })
    yield* Effect.acquireRelease(liveness.beat, () =>
      liveness.forget.pipe(
        Effect.catch((error) => Effect.logWarning("cannot remove the claim holder's liveness key; it expires by itself").pipe(Effect.annotateLogs({ error: error.message }), annotate))
      )
    )
    // A failed renewal is logged and the next one tried: a holder cut off from Valkey for the
    // key's whole lifetime counts as dead, and its done marks then meet `LeaseLost`.
    const renew = liveness.beat.pipe(
      Effect.catch((error) => Effect.logWarning("claim holder liveness renewal failed").pipe(Effect.annotateLogs({ error: error.message }), annotate))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(Duration.millis(CLAIM_HOLDER_BEAT_MS)), renew)))
    return liveness.holder
  })
