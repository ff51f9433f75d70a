import { Effect } from "effect"
import { encodeJobOrderRecord, type JobState, JobStates } from "@microdcs/job-state"
import { JobOrderDao, JobResponseDao } from "@microdcs/store"

/**
 * Loads a big scope for the console benches: `count` job orders (ids `{idPrefix}{000000}`) written
 * 500 at a time with `putMany`, each in the state `stateOf(i)` gives, and for every one `respond(i)`
 * names a job response for (its state and reason), that response, ended `i` ms after `startedAt`.
 * Returns the job order ids.
 */
export interface LoadOptions {
  readonly scope: string
  readonly count: number
  readonly idPrefix?: string | undefined
  readonly stateOf?: ((i: number) => JobState) | undefined
  readonly respond?: ((i: number) => { readonly state: string; readonly reason: string } | undefined) | undefined
  readonly startedAt?: number | undefined
}

const BATCH = 500

/** The job orders, `BATCH` per `putMany`, each in the state `stateOf(i)` gives. */
const putOrders = (options: LoadOptions, ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const dao = yield* JobOrderDao
    const stateOf = options.stateOf ?? (() => JobStates.NotAllowedToStart_Ready)
    for (let i = 0; i < ids.length; i += BATCH) {
      yield* dao.putMany(
        ids.slice(i, i + BATCH).map((id, k) => ({
          id,
          scope: options.scope,
          doc: encodeJobOrderRecord({ JobOrderID: id, Priority: 5 } as never, stateOf(i + k)),
          priority: 5,
          expectedVersion: 0,
          change: "Store"
        }))
      )
    }
  })

/** The job responses `respond(i)` names, the `i`-th ended `i` ms after `startedAt`. */
const putResponses = (options: LoadOptions, ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const responses = yield* JobResponseDao
    const startedAt = options.startedAt ?? Date.now() - options.count
    const responded = ids.flatMap((id, i) => {
      const response = options.respond?.(i)
      return response === undefined ? [] : [{ id, i, ...response }]
    })
    yield* Effect.forEach(
      responded,
      ({ id, i, state, reason }) =>
        responses.put({
          id: `${id}-response`,
          scope: options.scope,
          orderId: id,
          state,
          startTime: startedAt + i - 1000,
          endTime: startedAt + i,
          doc: JSON.stringify({ JobResponseID: `${id}-response`, JobOrderID: id, Description: { Text: reason, Locale: "en" } }),
          expectedVersion: 0,
          change: "ResultUpdate"
        }),
      { concurrency: 32, discard: true }
    )
  })

export const loadJobOrders = (options: LoadOptions) =>
  Effect.gen(function* () {
    const prefix = options.idPrefix ?? "jo-"
    const ids = Array.from({ length: options.count }, (_, i) => `${prefix}${String(i).padStart(6, "0")}`)
    yield* putOrders(options, ids)
    yield* putResponses(options, ids)
    return ids
  })
