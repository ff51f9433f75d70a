import { Effect, Option } from "effect"
import type { PublishFailure } from "@microdcs/cloudevents-mqtt"
import type { ChangeEntry, ConnectionError, InvalidInput, WrongType } from "@microdcs/store"
import { publishEngineStatusEvents } from "./EngineStatusEvents.js"
import { syncJob } from "./JobSync.js"
import type { PublisherContext } from "./PublisherContext.js"
import { listedJobOrders, publishStateIndex } from "./StateIndex.js"

export type FollowFailure = InvalidInput | WrongType | ConnectionError | PublishFailure

/** Job orders synced at once within a batch (each id once, so order between ids does not matter). */
const SYNC_CONCURRENCY = 8

/**
 * The jobs a batch touched, in first-seen order: a job order entry publishes the order topic;
 * a job response entry only makes its job order's result eligible (its change entry names the
 * response id, so the order id comes from the response document).
 */
const touchedJobs = (ctx: PublisherContext, scope: string, entries: ReadonlyArray<ChangeEntry>) =>
  Effect.gen(function* () {
    const jobs = new Map<string, { order: boolean }>()
    const responseIds = new Set<string>()
    for (const entry of entries) {
      if (entry.kind === "joborder") jobs.set(entry.id, { order: true })
      else if (entry.kind === "jobresponse") responseIds.add(entry.id)
    }
    for (const responseId of responseIds) {
      const response = yield* ctx.responses.get(responseId).pipe(
        Effect.map(Option.some),
        // A response deleted since (or one with a bad id) has nothing left to publish.
        Effect.catchTags({ NotFound: () => Effect.succeedNone, InvalidInput: () => Effect.succeedNone })
      )
      if (Option.isNone(response) || response.value.scope !== scope || response.value.orderId === "") continue
      if (!jobs.has(response.value.orderId)) jobs.set(response.value.orderId, { order: false })
    }
    return jobs
  })

/** Publishes what one batch of change entries touched; `true` when it touched any job. */
export const publishBatch = (
  ctx: PublisherContext,
  scope: string,
  entries: ReadonlyArray<ChangeEntry>
): Effect.Effect<boolean, FollowFailure> =>
  Effect.gen(function* () {
    const jobs = yield* touchedJobs(ctx, scope, entries)
    yield* Effect.forEach(jobs, ([id, publish]) => syncJob(ctx, scope, id, publish), { concurrency: SYNC_CONCURRENCY, discard: true })
    yield* publishEngineStatusEvents(ctx, scope, entries)
    return jobs.size > 0
  })

/**
 * The state index after a batch. One that cannot be encoded (over the connection's
 * `maxPayloadBytes`: thousands of jobs in one scope) is logged and left out rather than failed,
 * since no retry can shrink it and the cursor must still move on.
 */
const indexScope = (ctx: PublisherContext, scope: string) =>
  publishStateIndex(ctx, scope).pipe(
    Effect.asVoid,
    Effect.catchTag("EncodeError", (e) =>
      Effect.logError("publisher: state index not published; raise the MQTT maxPayloadBytes").pipe(Effect.annotateLogs({ scope, reason: e.message }))
    )
  )

/**
 * Follows `changes:{scope}` from the saved cursor until it is drained. Per batch: publish the
 * touched jobs, then the state index (only when a job was touched: work master changes share
 * the stream), then save the cursor. A failure leaves the cursor where it was, so the batch is
 * published again on the next round (at-least-once; publishing is idempotent).
 *
 * The cursor is re-read from Valkey on every round, so an operator's reset (`admin publisher
 * republish`) takes effect without a restart.
 */
export const drainScope = (ctx: PublisherContext, scope: string): Effect.Effect<void, FollowFailure> =>
  Effect.gen(function* () {
    let cursor = Option.getOrElse(yield* ctx.cursors.get(scope), () => "0")
    for (;;) {
      const page = yield* ctx.changes.read(scope, { after: cursor, count: ctx.options.batchSize })
      // `next` moves past undecodable entries too, so a page may be empty and still advance.
      if (page.next === cursor) return
      if (page.entries.length > 0) {
        const touched = yield* publishBatch(ctx, scope, page.entries)
        if (touched) yield* indexScope(ctx, scope)
      }
      yield* ctx.cursors.set(scope, page.next)
      if (page.entries.length > 0) yield* ctx.stats.add("batches")
      cursor = page.next
    }
  })

/**
 * Republishes a scope from scratch: every listed job order's order topic (and result, when
 * finished), then the state index. Run when a publisher becomes active, so a broker that lost
 * its retained store is refilled without waiting for changes.
 */
export const republishScope = (ctx: PublisherContext, scope: string): Effect.Effect<void, FollowFailure> =>
  Effect.gen(function* () {
    const ids = yield* listedJobOrders(ctx, scope)
    yield* Effect.forEach(ids, (id) => syncJob(ctx, scope, id, { order: true }), { concurrency: SYNC_CONCURRENCY, discard: true })
    yield* indexScope(ctx, scope)
  })
