import { Effect, Either } from "effect"
import {
  decodeJobOrderRecord,
  type DecodedJobOrder,
  encodeJobOrderRecord,
  isInternal,
  normalizedName,
  priorityOf,
  transition,
  transitionTable,
  type Trigger
} from "@microdcs/job-state"
import { type ConnectionError, type InvalidInput, JobOrderDao, StateMoved, type WrongType } from "@microdcs/store"

const MAX_ATTEMPTS = 10

export interface LoadedJobOrder extends DecodedJobOrder {
  readonly scope: string
  readonly version: number
}

export type TransitionOutcome =
  | { readonly _tag: "Applied"; readonly from: string; readonly to: string }
  | { readonly _tag: "Refused"; readonly from: string }
  | { readonly _tag: "Missing" }

/**
 * Reads job orders and moves them with the shared state machine. Every move is a versioned put
 * with the trigger as the change word, so two concurrent moves never both win.
 */
export class JobOrderTransitions extends Effect.Service<JobOrderTransitions>()("@microdcs/sfc/JobOrderTransitions", {
  effect: Effect.gen(function* () {
    const jobOrders = yield* JobOrderDao

    /** The job order with its decoded state; `undefined` when it does not exist or is unreadable. */
    const load = (id: string): Effect.Effect<LoadedJobOrder | undefined, InvalidInput | WrongType | ConnectionError> =>
      jobOrders.get(id).pipe(
        Effect.map((doc) => {
          const decoded = decodeJobOrderRecord(doc.doc)
          return Either.isRight(decoded) ? { ...decoded.right, scope: doc.scope, version: doc.version } : undefined
        }),
        Effect.catchTag("NotFound", () => Effect.succeed(undefined))
      )

    /**
     * Applies a trigger. An internal trigger whose target the job order already has (a
     * redelivered outbox entry) counts as applied, so handlers stay idempotent.
     */
    const apply = (
      id: string,
      trigger: Trigger,
      op?: string
    ): Effect.Effect<TransitionOutcome, InvalidInput | WrongType | ConnectionError | StateMoved> =>
      Effect.gen(function* () {
        for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
          const current = yield* load(id)
          if (!current) return { _tag: "Missing" } as const
          const from = normalizedName(current.state)
          const moved = transition(current.state, trigger)
          if (Either.isLeft(moved)) {
            // A redelivered internal trigger finds the job order where it put it.
            if (isInternal(trigger) && transitionTable[trigger].to === from) return { _tag: "Applied", from, to: from } as const
            return { _tag: "Refused", from } as const
          }
          const written = yield* jobOrders
            .put({
              id,
              scope: current.scope,
              doc: encodeJobOrderRecord(current.jobOrder, moved.right, current.comment),
              priority: priorityOf(current.jobOrder),
              expectedVersion: current.version,
              change: trigger,
              ...(op !== undefined ? { op } : {})
            })
            .pipe(
              Effect.as(true),
              Effect.catchTag("VersionConflict", () => Effect.succeed(false)),
              Effect.catchTags({ ScopeConflict: (e) => Effect.die(e), LimitReached: (e) => Effect.die(e) })
            )
          if (written) return { _tag: "Applied", from, to: normalizedName(moved.right) } as const
        }
        return yield* new StateMoved({ key: id, attempts: MAX_ATTEMPTS })
      })

    return { load, apply } as const
  })
}) {}
