import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { type ConnectionError, DedupeStore, type InvalidInput, type LeaseLost, type WrongType } from "@microdcs/store"

/** 2 × a 30 s handler timeout: the lease must outlive the slowest handler that still succeeds. */
export const DEFAULT_LEASE_MS = 60_000
/** How long a processed event is remembered as done (island.md §2: default 10 min). */
export const DEFAULT_DONE_TTL_MS = 10 * 60_000

export interface ExactlyOnceOptions<A = unknown> {
  /** The CloudEvent `source` and `id`: together they name the event. */
  readonly source: string
  readonly id: string
  /** Lease on the claim while processing, about 2 × the handler timeout; default 60 s. */
  readonly leaseMs?: number | undefined
  /** How long the event stays done after processing; default 10 min. */
  readonly doneTtlMs?: number | undefined
  /**
   * The reply to keep with the done mark (a JSON text), so a duplicate gets the same answer
   * again; `undefined` keeps none. Without this option no reply is kept.
   */
  readonly storedReply?: ((value: A) => string | undefined) | undefined
}

/**
 * The outcome: processed now; a duplicate of a processed event (with the reply kept for it, if
 * any); or held, because another holder's claim is live: the caller must not acknowledge the
 * event and tries again once that lease ends (`remainingMs`, 0 when it is ending now), since a
 * holder that crashed never marks it done.
 */
export type ExactlyOnceResult<A> =
  | { readonly _tag: "Processed"; readonly value: A }
  | { readonly _tag: "Duplicate"; readonly reason: "done"; readonly reply?: string | undefined }
  | { readonly _tag: "Held"; readonly remainingMs: number }

/**
 * Failures of the dedupe store itself. `LeaseLost` from marking done means the handler outlived
 * its lease: its effect happened, but another consumer may have claimed the event meanwhile.
 */
export type DedupeFailure = WrongType | InvalidInput | ConnectionError | LeaseLost

/**
 * The exactly-once effect over at-least-once delivery (island.md §2): claim the event's dedupe
 * key, process, mark it done (with the reply to keep), return. A duplicate arriving when the key
 * is done is not processed; one arriving while another holder's claim is live is `Held`, never
 * skipped, so a crashed holder loses nothing. A failing (or interrupted) `process` gives its
 * claim back and fails with its own error, so the broker's redelivery is processed instead of
 * waiting out the lease.
 */
export const exactlyOnce = <A, E, R>(
  options: ExactlyOnceOptions<A>,
  process: Effect.Effect<A, E, R>
): Effect.Effect<ExactlyOnceResult<A>, E | DedupeFailure, R | DedupeStore> =>
  Effect.gen(function* () {
    const dedupe = yield* DedupeStore
    const { source, id } = options
    // A token per attempt: a redelivery handled by this same process is a different claimant.
    const token = randomUUID()
    const release = dedupe.release(source, id, token).pipe(
      Effect.catchAll((error) =>
        // The lease still expires on its own; the redelivery just waits for it.
        Effect.logWarning("could not release the dedupe claim").pipe(Effect.annotateLogs({ source, id, error: String(error) }))
      )
    )
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        const claim = yield* dedupe.claim(source, id, token, options.leaseMs ?? DEFAULT_LEASE_MS).pipe(
          Effect.catchTag("Busy", (busy) => Effect.succeed({ _tag: "Busy", remainingMs: busy.remainingMs } as const))
        )
        if (claim._tag === "Busy") return { _tag: "Held", remainingMs: claim.remainingMs } as const
        if (claim._tag === "Done") return { _tag: "Duplicate", reason: "done", reply: claim.reply } as const
        const value = yield* restore(process).pipe(Effect.onError(() => release))
        const doneTtlMs = options.doneTtlMs ?? DEFAULT_DONE_TTL_MS
        const reply = options.storedReply?.(value)
        yield* dedupe.markDone(source, id, token, doneTtlMs, reply).pipe(
          // A reply the store refuses to keep (over the size limit) must not undo the done mark:
          // the effect happened. Duplicates then get no reply, as without a kept reply.
          Effect.catchTag("InvalidInput", (refused) =>
            reply === undefined || refused.field !== "reply"
              ? Effect.fail(refused)
              : Effect.logWarning("reply not kept with the done mark").pipe(
                  Effect.annotateLogs({ source, id, error: refused.message }),
                  Effect.zipRight(dedupe.markDone(source, id, token, doneTtlMs))
                )
          )
        )
        return { _tag: "Processed", value } as const
      })
    )
  })
