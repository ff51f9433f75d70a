import { Clock, Effect, Either, Option } from "effect"
import { decodeJobOrderRecord, isFinished, isTerminal, normalizedName } from "@microdcs/job-state"
import type { PublishFailure } from "@microdcs/cloudevents-mqtt"
import type { ConnectionError, InvalidInput, JobOrderPage, WrongType } from "@microdcs/store"
import type { PublisherContext } from "./PublisherContext.js"
import { stateIndexEvent, type StateIndex, type StateIndexJob } from "./PublisherEvents.js"
import { stateIndexTopic } from "./PublisherTopics.js"
import { retain } from "./RetainedTopics.js"

/** Job orders read at once while building an index. */
const READ_CONCURRENCY = 16
/** Ids per list page. */
const LIST_PAGE = 500

/**
 * Every listed job order id of a scope, highest priority first. A job that moves between two
 * pages may be seen twice; the first place wins.
 */
export const listedJobOrders = (ctx: PublisherContext, scope: string): Effect.Effect<ReadonlyArray<string>, InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    const ids = new Set<string>()
    let offset: number | null = 0
    while (offset !== null) {
      const page: JobOrderPage = yield* ctx.jobOrders.list(scope, { offset, count: LIST_PAGE })
      for (const item of page.items) ids.add(item.id)
      offset = page.next
    }
    return [...ids]
  })

/** One job's row, or none when it left the scope meanwhile, is retired or cannot be read. */
const jobRow = (ctx: PublisherContext, scope: string, id: string) =>
  Effect.gen(function* () {
    const stored = yield* ctx.jobOrders.get(id).pipe(Effect.map(Option.some), Effect.catchTag("NotFound", () => Effect.succeedNone))
    if (Option.isNone(stored) || stored.value.scope !== scope) return Option.none<StateIndexJob>()
    const decoded = decodeJobOrderRecord(stored.value.doc)
    if (Either.isLeft(decoded)) {
      yield* Effect.logWarning("publisher: malformed job order left out of the state index").pipe(
        Effect.annotateLogs({ scope, jobOrderId: id, reason: decoded.left.message })
      )
      return Option.none<StateIndexJob>()
    }
    const { state } = decoded.right
    if (isTerminal(state)) return Option.none<StateIndexJob>()
    // Same rule as the result topic: only a finished job's response is published.
    const hasResult = isFinished(state)
      ? yield* ctx.responses.byOrder(id).pipe(Effect.as(true), Effect.catchTag("NotFound", () => Effect.succeed(false)))
      : false
    return Option.some<StateIndexJob>({ job_order_id: id, state: normalizedName(state), has_result: hasResult })
  })

/** The jobs of a scope's state index, in priority order, EndState left out. */
export const stateIndexJobs = (
  ctx: PublisherContext,
  scope: string
): Effect.Effect<ReadonlyArray<StateIndexJob>, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const ids = yield* listedJobOrders(ctx, scope)
    const rows = yield* Effect.forEach(ids, (id) => jobRow(ctx, scope, id), { concurrency: READ_CONCURRENCY })
    return rows.flatMap((row) => (Option.isSome(row) ? [row.value] : []))
  })

/**
 * Retains `state-index` of a scope. The sequence number is taken after the jobs were read, so a
 * higher `seq` never describes an older read by this publisher.
 */
export const publishStateIndex = (
  ctx: PublisherContext,
  scope: string
): Effect.Effect<StateIndex, InvalidInput | WrongType | ConnectionError | PublishFailure> =>
  Effect.gen(function* () {
    const topic = stateIndexTopic(ctx.options, scope)
    // A scope with no topic fails here, before it consumes a sequence number.
    yield* topic
    const jobs = yield* stateIndexJobs(ctx, scope)
    const seq = yield* ctx.cursors.nextSequence(scope)
    const index: StateIndex = { seq, scope, published_at: new Date(yield* Clock.currentTimeMillis).toISOString(), jobs }
    yield* retain(ctx, topic, stateIndexEvent(ctx.options.source, index))
    return index
  })
