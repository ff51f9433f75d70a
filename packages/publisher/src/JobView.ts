import { Effect, Result, Option } from "effect"
import { decodeJobOrderRecord, decodeJobResponseText, type JobOrder, type JobResponse, type JobState, isFinished, isTerminal, normalizedName } from "@microdcs/job-state"
import type { ConnectionError, InvalidInput, JobResponseDocument, WrongType } from "@microdcs/store"
import type { PublisherContext } from "./PublisherContext.js"
import type { IndexedJob } from "./SortedJobs.js"

/**
 * What the publisher reads of one job, once per sync: its retained topics and its state index
 * row both come from this, so the incremental index and a full rebuild agree by construction.
 *
 * - `Gone`: deleted, expired, in another scope, or EndState (Clear, Cancel): no topics, no row;
 * - `Malformed`: a document that does not decode: left alone, no row;
 * - `Live`: `listed` is its score in the scope list (none when it is not listed), `response` the
 *   job response of a finished job (Ended_* or Aborted; an unfinished job's response is not
 *   published yet), in the current form; one that does not decode is logged and counts as none.
 */
export type JobView =
  | { readonly _tag: "Gone" }
  | { readonly _tag: "Malformed"; readonly reason: string }
  | {
      readonly _tag: "Live"
      readonly version: number
      readonly jobOrder: JobOrder
      readonly state: JobState
      readonly listed: Option.Option<number>
      readonly response: Option.Option<PublishedResponse>
    }

/** A job response as `result/{id}` carries it: its store version (the event's id) and the document in the current form. */
export interface PublishedResponse {
  readonly version: number
  readonly document: JobResponse
}

const gone: JobView = { _tag: "Gone" }

/** The job's score in the scope list, or none when it is not listed. */
const listedPriority = (ctx: PublisherContext, scope: string, id: string) =>
  Effect.gen(function* () {
    return yield* ctx.scores.jobOrderPriority(scope, id)
  })

/** The response in the current form (the previous release's form upgraded); none after a warning when it does not decode. */
const published = (scope: string, stored: JobResponseDocument): Effect.Effect<Option.Option<PublishedResponse>> => {
  const decoded = decodeJobResponseText(stored.doc)
  if (Result.isSuccess(decoded)) return Effect.succeed(Option.some({ version: stored.version, document: decoded.success }))
  return Effect.logWarning("publisher: job response skipped").pipe(
    Effect.annotateLogs({ scope, jobOrderId: stored.orderId, reason: `job response ${stored.id}: ${decoded.failure.message}` }),
    Effect.as(Option.none())
  )
}

/**
 * Reads one job: its document, its place in the list (unless `knownPriority` comes from a list
 * page just read) and, once it is finished, its response.
 */
export const readJob = (
  ctx: PublisherContext,
  scope: string,
  id: string,
  knownPriority: Option.Option<number> = Option.none()
): Effect.Effect<JobView, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    // The document and its place in the list are read at once (one round trip, not two); the
    // place only counts, failure included, for a live job of this scope, as when it was read after.
    const [stored, priority] = yield* Effect.all(
      [
        ctx.jobOrders.get(id).pipe(Effect.map(Option.some), Effect.catchTag("NotFound", () => Effect.succeedNone)),
        Option.isSome(knownPriority) ? Effect.succeed(Result.succeed(knownPriority)) : Effect.result(listedPriority(ctx, scope, id))
      ],
      { concurrency: 2 }
    )
    if (Option.isNone(stored) || stored.value.scope !== scope) return gone
    const decoded = decodeJobOrderRecord(stored.value.doc)
    if (Result.isFailure(decoded)) return { _tag: "Malformed", reason: decoded.failure.message } as const
    const { jobOrder, state } = decoded.success
    if (isTerminal(state)) return gone
    const listed = yield* Effect.fromResult(priority)
    const response = isFinished(state)
      ? yield* ctx.responses.byOrder(id).pipe(
          Effect.flatMap((stored) => published(scope, stored)),
          Effect.catchTag("NotFound", () => Effect.succeedNone)
        )
      : Option.none()
    return { _tag: "Live", version: stored.value.version, jobOrder, state, listed, response } as const
  })

/** The job's state index row: a listed live job, with `has_result` when it has a response. */
export const rowOf = (id: string, view: JobView): Option.Option<IndexedJob> =>
  view._tag === "Live" && Option.isSome(view.listed)
    ? Option.some({
        priority: view.listed.value,
        row: { job_order_id: id, state: normalizedName(view.state), has_result: Option.isSome(view.response) }
      })
    : Option.none()
