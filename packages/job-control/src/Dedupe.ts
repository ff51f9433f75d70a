import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { type ConnectionError, DedupeStore, type InvalidInput, type LeaseLost, type WrongType } from "@microdcs/store"

/** 2 × a 30 s handler timeout: the lease must outlive the slowest handler that still succeeds. */
export const DEFAULT_LEASE_MS = 60_000
/** How long a processed event is remembered as done (island.md §2: default 10 min). */
export const DEFAULT_DONE_TTL_MS = 10 * 60_000

export interface ExactlyOnceOptions {
  /** The CloudEvent `source` and `id`: together they name the event. */
  readonly source: string
  readonly id: string
  /** Lease on the claim while processing, about 2 × the handler timeout; default 60 s. */
  readonly leaseMs?: number | undefined
  /** How long the event stays done after processing; default 10 min. */
  readonly doneTtlMs?: number | undefined
}

/** The outcome: processed now, or a duplicate skipped (another consumer holds it, or it was done). */
export type ExactlyOnceResult<A> =
  | { readonly _tag: "Processed"; readonly value: A }
  | { readonly _tag: "Duplicate"; readonly reason: "busy" | "done" }

/**
 * Failures of the dedupe store itself. `LeaseLost` from marking done means the handler outlived
 * its lease: its effect happened, but another consumer may have claimed the event meanwhile.
 */
export type DedupeFailure = WrongType | InvalidInput | ConnectionError | LeaseLost

/**
 * The exactly-once effect over at-least-once delivery (island.md §2): claim the event's dedupe
 * key, process, mark it done, return. A duplicate arriving while the key is claimed or done is
 * not processed. A failing (or interrupted) `process` gives its claim back and fails with its own
 * error, so the broker's redelivery is processed instead of waiting out the lease.
 */
export const exactlyOnce = <A, E, R>(
  options: ExactlyOnceOptions,
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
          Effect.map((claimed) => (claimed._tag === "Done" ? ("done" as const) : ("claimed" as const))),
          Effect.catchTag("Busy", () => Effect.succeed("busy" as const))
        )
        if (claim !== "claimed") return { _tag: "Duplicate", reason: claim } as const
        const value = yield* restore(process).pipe(Effect.onError(() => release))
        yield* dedupe.markDone(source, id, token, options.doneTtlMs ?? DEFAULT_DONE_TTL_MS)
        return { _tag: "Processed", value } as const
      })
    )
  })
