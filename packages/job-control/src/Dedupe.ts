import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import { type AdmissionTarget, type ClaimAdmission, claimToken, type ConnectionError, DedupeStore, InvalidInput, type LeaseLost, type WrongType } from "@microdcs/store"
import type { DoneInWrite } from "./DoneInWrite.js"

/** 2 × a 30 s handler timeout: the lease must outlive the slowest handler that still succeeds. */
export const DEFAULT_LEASE_MS = 60_000
/** How long a processed event is remembered as done (default 10 min). */
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
  /**
   * The job order a Store or StoreAndStart request would create (see `admissionTarget`): the
   * claim then reads its admission in the same round trip and hands it to `process`.
   */
  readonly admitJobOrder?: AdmissionTarget | undefined
  /**
   * This process's claim holder (`keepClaimHolder`): the claim names it, so once this process
   * dies a duplicate takes the claim over within the holder's liveness lifetime (3 s) instead of
   * the lease. Without one, only the lease's end frees a claim its holder left.
   */
  readonly holder?: string | undefined
}

/** What the claim gives the processing: the admission reads, when `admitJobOrder` asked for them, and its done mark. */
export interface ClaimedEvent<A = unknown> {
  /** The reads, with the job order they were made for (`admitJobOrder`). */
  readonly admission: { readonly jobOrder: AdmissionTarget; readonly read: ClaimAdmission } | undefined
  /**
   * The event's done mark, for a write that lands it with its own effect
   * (`JobOrderDao.createMarkingDone`); `exactlyOnce` always gives one. Its values are the
   * processing's results (`exactlyOnce` hands an `unknown` one, so that a processing's result
   * type is still inferred from what it returns).
   */
  readonly done?: DoneInWrite<A> | undefined
}

/**
 * The outcome: processed now; a duplicate of a processed event (with the reply kept for it, if
 * any); or held, because another holder's claim is live: the caller must not acknowledge the
 * event and tries again after `remainingMs` (when that lease ends, or sooner when the holder's
 * liveness would end: then it may be dead; 0 when it is ending now), since a holder that crashed
 * never marks it done.
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

/** This attempt's claim (taken over from a dead holder, when it left one), or `Held` while another holder's claim is live. */
const claimEvent = <A>(dedupe: DedupeStore["Service"], options: ExactlyOnceOptions<A>, token: string) => {
  const { source, id } = options
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
  const claiming =
    options.admitJobOrder === undefined ? dedupe.claim(source, id, token, leaseMs) : dedupe.claimWithAdmission(source, id, token, leaseMs, options.admitJobOrder)
  return claiming.pipe(
    Effect.tap((claim) =>
      claim._tag === "Claimed" && claim.takenOverFrom !== undefined
        ? Effect.logInfo("took over the dedupe claim of a holder that died").pipe(Effect.annotateLogs({ source, id, holder: claim.takenOverFrom }))
        : Effect.void
    ),
    Effect.catchTag("Busy", (busy) => Effect.succeed({ _tag: "Held", remainingMs: busy.remainingMs } as const))
  )
}

/** The done mark a processing may land with its own write; `landed` records that one did. */
const doneInWrite = <A>(dedupe: DedupeStore["Service"], options: ExactlyOnceOptions<A>, token: string, landed: { marked: boolean }): DoneInWrite<unknown> => ({
  mark: (value) => {
    // The processing marks the value it returns (see DoneInWrite), so `value` is an `A`.
    const mark = dedupe.doneMark(options.source, options.id, token, options.doneTtlMs ?? DEFAULT_DONE_TTL_MS, options.storedReply?.(value as A))
    // A reply the store cannot keep: the mark after processing drops it (see markDone).
    return mark instanceof InvalidInput ? undefined : mark
  },
  landed: () => {
    landed.marked = true
  }
})

/** Marks the event done with the reply to keep; a reply the store refuses to keep (over the size limit) is dropped, not the done mark. */
const markDone = <A>(dedupe: DedupeStore["Service"], options: ExactlyOnceOptions<A>, token: string, value: A) => {
  const { source, id } = options
  const doneTtlMs = options.doneTtlMs ?? DEFAULT_DONE_TTL_MS
  const reply = options.storedReply?.(value)
  return dedupe.markDone(source, id, token, doneTtlMs, reply).pipe(
    // The effect happened: duplicates then get no reply, as without a kept reply.
    Effect.catchTag("InvalidInput", (refused) =>
      reply === undefined || refused.field !== "reply"
        ? Effect.fail(refused)
        : Effect.logWarning("reply not kept with the done mark").pipe(
            Effect.annotateLogs({ source, id, error: refused.message }),
            Effect.andThen(dedupe.markDone(source, id, token, doneTtlMs))
          )
    )
  )
}

/**
 * The exactly-once effect over at-least-once delivery: claim the event's dedupe
 * key, process, mark it done (with the reply to keep), return. A duplicate arriving when the key
 * is done is not processed; one arriving while another holder's claim is live is `Held`, never
 * skipped, so a crashed holder loses nothing, and takes the claim over once that holder is dead
 * (its liveness key gone, see `holder`); the dead holder's own done mark then meets `LeaseLost`.
 * A failing (or interrupted) `process` gives its claim back and fails with its own error, so the
 * broker's redelivery is processed instead of waiting out the lease. `process` may take what
 * the claim read for it (see `admitJobOrder`), and land its done mark with its own write
 * (`ClaimedEvent.done`): then no mark follows the processing.
 */
export const exactlyOnce = <A, E, R>(
  options: ExactlyOnceOptions<A>,
  process: Effect.Effect<A, E, R> | ((claimed: ClaimedEvent) => Effect.Effect<A, E, R>)
): Effect.Effect<ExactlyOnceResult<A>, E | DedupeFailure, R | DedupeStore> =>
  Effect.gen(function* () {
    const dedupe = yield* DedupeStore
    const { source, id } = options
    // A token per attempt: a redelivery handled by this same process is a different claimant.
    const token = options.holder === undefined ? randomUUID() : claimToken(options.holder)
    const release = dedupe.release(source, id, token).pipe(
      Effect.catch((error) =>
        // The lease still expires on its own; the redelivery just waits for it.
        Effect.logWarning("could not release the dedupe claim").pipe(Effect.annotateLogs({ source, id, error: String(error) }))
      )
    )
    return yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        const claim = yield* claimEvent(dedupe, options, token)
        if (claim._tag === "Held") return claim
        if (claim._tag === "Done") return { _tag: "Duplicate", reason: "done", reply: claim.reply } as const
        // A service tag is an Effect and a function both: asking `isEffect` first keeps it an Effect.
        // Suspended, so a throw while building it is a defect that gives the claim back too.
        const admitted = options.admitJobOrder === undefined || claim.admission === undefined ? undefined : { jobOrder: options.admitJobOrder, read: claim.admission }
        const landed = { marked: false }
        const processing = Effect.isEffect(process) ? process : Effect.suspend(() => process({ admission: admitted, done: doneInWrite(dedupe, options, token, landed) }))
        const value = yield* restore(processing).pipe(Effect.onError(() => release))
        if (!landed.marked) yield* markDone(dedupe, options, token, value)
        return { _tag: "Processed", value } as const
      })
    )
  })
