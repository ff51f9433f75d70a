import { Effect, Option } from "effect"
import { toStoredState } from "@microdcs/job-state"
import type { MqttPublishError } from "@microdcs/cloudevents-mqtt"
import type { ConnectionError } from "@microdcs/store"
import { type PublishedResponse, readJob, rowOf } from "./JobView.js"
import type { PublisherContext } from "./PublisherContext.js"
import { orderEvent, resultEvent } from "./PublisherEvents.js"
import { jobTopic } from "./PublisherTopics.js"
import { retain, unretain } from "./RetainedTopics.js"
import type { IndexedJob } from "./SortedJobs.js"

/** What a failed sync leaves to the next round: only failures that a retry can cure. */
export type SyncFailure = ConnectionError | MqttPublishError

const skip = (scope: string, id: string, reason: string) =>
  Effect.logWarning("publisher: job skipped").pipe(Effect.annotateLogs({ scope, jobOrderId: id, reason }))

/** Clear, Cancel, a deleted or expired document: neither order nor result stays retained. */
const retire = (ctx: PublisherContext, scope: string, id: string) =>
  Effect.andThen(unretain(ctx, jobTopic(ctx.options, "order", scope, id)), unretain(ctx, jobTopic(ctx.options, "result", scope, id)))

/** Retains `result/{id}` from the job order's response. */
const publishResult = (ctx: PublisherContext, scope: string, id: string, response: PublishedResponse) =>
  retain(ctx, jobTopic(ctx.options, "result", scope, id), resultEvent(ctx.options.source, scope, id, response.version, response.document))

/**
 * An id with no topic or a message that cannot be encoded (over the payload limit): no retry
 * helps, so it is logged and the job left as it is. A broker failure stays, for the next round.
 */
const orSkip =
  (scope: string, id: string) =>
  <E extends { readonly _tag: string; readonly message: string }>(effect: Effect.Effect<void, E>) =>
    Effect.catchIf(
      effect,
      (e): e is Exclude<E, MqttPublishError> => e._tag !== "MqttPublishError",
      (e) => skip(scope, id, e.message)
    )

/**
 * Brings a job's retained topics in line with its CURRENT document, whatever change entry led
 * here: publishing is idempotent and the latest state wins, so replaying a batch (at-least-once)
 * or reading a later state than the entry described never publishes anything stale.
 *
 * - gone (deleted, expired, another scope) or EndState (Clear, Cancel) → delete order and result;
 * - otherwise `order/{id}` when `order` is set (a job order change), and `result/{id}` once the
 *   job is Ended_* or Aborted and has a response (a job order end or a response put, whichever
 *   came last, finds both).
 *
 * Returns the job's state index row from the same read (none: not in the index); `knownPriority`
 * is its score from a list page just read, which spares the read of its place in the list. Failures that
 * no retry can cure (an id with no topic, a malformed document, a wrong key type) are logged and
 * skipped, so one bad job cannot stall its scope; such a job has no row.
 */
export const syncJob = (
  ctx: PublisherContext,
  scope: string,
  id: string,
  publish: { readonly order: boolean },
  knownPriority: Option.Option<number> = Option.none()
): Effect.Effect<Option.Option<IndexedJob>, SyncFailure> =>
  readJob(ctx, scope, id, knownPriority).pipe(
    Effect.flatMap((view) =>
      Effect.gen(function* () {
        switch (view._tag) {
          case "Gone":
            yield* orSkip(scope, id)(retire(ctx, scope, id))
            break
          case "Malformed":
            yield* skip(scope, id, view.reason)
            break
          case "Live": {
            if (publish.order) {
              const event = orderEvent(ctx.options.source, scope, id, view.version, { JobOrder: view.jobOrder, State: toStoredState(view.state) })
              yield* orSkip(scope, id)(retain(ctx, jobTopic(ctx.options, "order", scope, id), event))
            }
            if (Option.isSome(view.response)) yield* orSkip(scope, id)(publishResult(ctx, scope, id, view.response.value))
          }
        }
        return rowOf(id, view)
      })
    ),
    Effect.catchTags({
      InvalidInput: (e) => skip(scope, id, e.message).pipe(Effect.as(Option.none<IndexedJob>())),
      WrongType: (e) => skip(scope, id, e.message).pipe(Effect.as(Option.none<IndexedJob>()))
    })
  )
