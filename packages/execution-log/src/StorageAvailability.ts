import { Clock, Context, Effect, Layer, Ref } from "effect"

/**
 * Where the storage database stands, for readiness and the log: being started (the embedded
 * PGlite boots in the background), available, or waited for since `since` (epoch ms) because it
 * does not answer (`reason`: the last failure's first line).
 */
export type StorageState =
  | { readonly _tag: "Starting" }
  | { readonly _tag: "Available" }
  | { readonly _tag: "Waiting"; readonly since: number; readonly reason: string }

export interface StorageAvailabilityService {
  readonly state: Effect.Effect<StorageState>
  /** The database answered: waiting (if it was) is over. */
  readonly available: Effect.Effect<void>
  /**
   * A call found the database away: an available one is now waited for. A database being
   * started stays `Starting` (its start reports for itself), and an outage keeps its first report.
   */
  readonly waiting: (reason: string) => Effect.Effect<void>
  /** The start failed for a reason a database coming up cures: waited for (`since` kept), with this reason. */
  readonly startFailed: (reason: string) => Effect.Effect<void>
  /**
   * The database is gone whatever the state said (the embedded PostgreSQL's thread ended): waited
   * for (`since` kept) with this reason, over any a call reported first. Not logged here: whoever
   * restarts it logs the restart.
   */
  readonly lost: (reason: string) => Effect.Effect<void>
}

/** The storage database's state, shared by what starts it, the role that commits into it and readiness. */
export class StorageAvailability extends Context.Service<
  StorageAvailability,
  StorageAvailabilityService
>()("@microdcs/execution-log/StorageAvailability") {}

/** Moves to `Waiting` when `from` allows it (keeping `since` of a wait under way); logs the start of a wait once, when `log`. */
const toWaiting = (ref: Ref.Ref<StorageState>, reason: string, from: (was: StorageState) => boolean, log = true) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.flatMap(
      Ref.modify(ref, (was): readonly [StorageState, StorageState] =>
        from(was) ? [was, { _tag: "Waiting", since: was._tag === "Waiting" ? was.since : now, reason }] : [was, was]
      ),
      (was) =>
        was._tag === "Waiting" || !from(was) || !log
          ? Effect.void
          : Effect.logWarning("execution log storage: PostgreSQL does not answer; commits wait for it").pipe(Effect.annotateLogs({ reason }))
    )
  )

/** A state holder that logs each change between available and waiting once, not each retry. */
export const makeStorageAvailability = (initial: StorageState = { _tag: "Available" }): Effect.Effect<StorageAvailabilityService> =>
  Effect.map(Ref.make<StorageState>(initial), (ref) => ({
    state: Ref.get(ref),
    available: Effect.flatMap(
      Ref.getAndSet(ref, { _tag: "Available" }),
      (was) =>
        was._tag === "Waiting"
          ? Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Effect.logInfo("execution log storage: PostgreSQL answers again").pipe(Effect.annotateLogs({ waitedMs: now - was.since }))
            )
          : Effect.void
    ),
    waiting: (reason: string) => toWaiting(ref, reason, (was) => was._tag === "Available"),
    startFailed: (reason: string) => toWaiting(ref, reason, (was) => was._tag !== "Available"),
    lost: (reason: string) => toWaiting(ref, reason, () => true, false)
  }))

/** {@link makeStorageAvailability} as a layer. */
export const storageAvailabilityLayer = (initial?: StorageState): Layer.Layer<StorageAvailability> =>
  Layer.effect(StorageAvailability, makeStorageAvailability(initial))
