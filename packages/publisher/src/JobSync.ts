import { Effect, Either, Option } from "effect"
import { decodeJobOrderRecord, isFinished, isTerminal, toStoredState } from "@microdcs/job-state"
import type { MqttPublishError } from "@microdcs/cloudevents-mqtt"
import type { ConnectionError } from "@microdcs/store"
import type { PublisherContext } from "./PublisherContext.js"
import { orderEvent, resultEvent } from "./PublisherEvents.js"
import { jobTopic } from "./PublisherTopics.js"
import { retain, unretain } from "./RetainedTopics.js"

/** What a failed sync leaves to the next round: only failures that a retry can cure. */
export type SyncFailure = ConnectionError | MqttPublishError

const skip = (scope: string, id: string, reason: string) =>
  Effect.logWarning("publisher: job skipped").pipe(Effect.annotateLogs({ scope, jobOrderId: id, reason }))

/** Clear, Cancel, a deleted or expired document: neither order nor result stays retained. */
const retire = (ctx: PublisherContext, scope: string, id: string) =>
  Effect.zipRight(unretain(ctx, jobTopic(ctx.options, "order", scope, id)), unretain(ctx, jobTopic(ctx.options, "result", scope, id)))

/** Retains `result/{id}` from the job order's response, when there is one. */
const publishResult = (ctx: PublisherContext, scope: string, id: string) =>
  Effect.gen(function* () {
    const response = yield* ctx.responses.byOrder(id).pipe(Effect.map(Option.some), Effect.catchTag("NotFound", () => Effect.succeedNone))
    if (Option.isNone(response)) return
    let data: unknown
    try {
      data = JSON.parse(response.value.doc)
    } catch {
      return yield* skip(scope, id, `job response ${response.value.id} is not JSON`)
    }
    yield* retain(ctx, jobTopic(ctx.options, "result", scope, id), resultEvent(ctx.options.source, scope, id, response.value.version, data))
  })

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
 * Failures that no retry can cure (an id with no topic, a malformed document, a wrong key type)
 * are logged and skipped, so one bad job cannot stall its scope.
 */
export const syncJob = (
  ctx: PublisherContext,
  scope: string,
  id: string,
  publish: { readonly order: boolean }
): Effect.Effect<void, SyncFailure> =>
  Effect.gen(function* () {
    const stored = yield* ctx.jobOrders.get(id).pipe(Effect.map(Option.some), Effect.catchTag("NotFound", () => Effect.succeedNone))
    if (Option.isNone(stored) || stored.value.scope !== scope) return yield* retire(ctx, scope, id)
    const decoded = decodeJobOrderRecord(stored.value.doc)
    if (Either.isLeft(decoded)) return yield* skip(scope, id, decoded.left.message)
    const { jobOrder, state } = decoded.right
    if (isTerminal(state)) return yield* retire(ctx, scope, id)
    if (publish.order) {
      const event = orderEvent(ctx.options.source, scope, id, stored.value.version, { JobOrder: jobOrder, State: toStoredState(state) })
      yield* retain(ctx, jobTopic(ctx.options, "order", scope, id), event)
    }
    if (isFinished(state)) yield* publishResult(ctx, scope, id)
  }).pipe(
    Effect.catchTags({
      InvalidTopic: (e) => skip(scope, id, e.message),
      EncodeError: (e) => skip(scope, id, e.message),
      InvalidInput: (e) => skip(scope, id, e.message),
      WrongType: (e) => skip(scope, id, e.message)
    })
  )
