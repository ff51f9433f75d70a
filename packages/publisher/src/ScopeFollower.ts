import { Clock, Effect, Option } from "effect"
import type { MqttSubscribeError, PublishFailure } from "@microdcs/cloudevents-mqtt"
import type { ChangeEntry, ConnectionError, InvalidInput, WrongType } from "@microdcs/store"
import { publishEngineStatusEvents } from "./EngineStatusEvents.js"
import { syncJob } from "./JobSync.js"
import type { PublisherContext } from "./PublisherContext.js"
import { type IndexedJob, SortedJobs } from "./SortedJobs.js"
import { listedJobOrders, publishStateIndex, rebuildJobs, type ScopeView } from "./StateIndex.js"

export type FollowFailure = InvalidInput | WrongType | ConnectionError | PublishFailure | MqttSubscribeError

/**
 * Job orders synced at once within a batch (each id once, so order between ids does not matter).
 * A batch is at most `batchSize` entries (default 100): at 8, a batch of a few dozen jobs took
 * several waves of reads and PUBACKs, and every change behind it waited for them.
 */
const SYNC_CONCURRENCY = 64

/**
 * The jobs a batch touched, in first-seen order: a job order entry publishes the order topic;
 * a job response entry only makes its job order's result eligible (its change entry names the
 * response id, so the order id comes from the response document). `unsure` when a response is
 * gone and its job order cannot be told: the state index is then rebuilt from the list.
 */
const touchedJobs = (ctx: PublisherContext, scope: string, entries: ReadonlyArray<ChangeEntry>) =>
  Effect.gen(function* () {
    const jobs = new Map<string, { order: boolean }>()
    const responseIds = new Set<string>()
    let unsure = false
    for (const entry of entries) {
      if (entry.kind === "joborder") jobs.set(entry.id, { order: true })
      else if (entry.kind === "jobresponse") responseIds.add(entry.id)
    }
    // Read at once, taken in order: one after the other, a batch with a few dozen finished jobs
    // waited a round trip per response before it published anything.
    const responses = yield* Effect.forEach(
      responseIds,
      (responseId) =>
        ctx.responses.get(responseId).pipe(
          Effect.map(Option.some),
          // A response deleted since (or one with a bad id) has nothing left to publish.
          Effect.catchTags({ NotFound: () => Effect.succeedNone, InvalidInput: () => Effect.succeedNone })
        ),
      { concurrency: SYNC_CONCURRENCY }
    )
    for (const response of responses) {
      if (Option.isNone(response)) unsure = true
      if (Option.isNone(response) || response.value.scope !== scope || response.value.orderId === "") continue
      if (!jobs.has(response.value.orderId)) jobs.set(response.value.orderId, { order: false })
    }
    return { jobs, unsure }
  })

/**
 * Publishes what one batch of change entries touched and puts the rows of those jobs in the
 * view; `true` when it touched any job.
 */
export const publishBatch = (
  ctx: PublisherContext,
  scope: string,
  entries: ReadonlyArray<ChangeEntry>,
  view: ScopeView
): Effect.Effect<boolean, FollowFailure> =>
  Effect.gen(function* () {
    const { jobs, unsure } = yield* touchedJobs(ctx, scope, entries)
    // The status events need no read: they go out while the jobs are read and published.
    yield* Effect.all(
      [
        Effect.forEach(
          jobs,
          ([id, publish]) =>
            Effect.map(syncJob(ctx, scope, id, publish), (row) => (Option.isSome(row) ? view.jobs.set(row.value) : view.jobs.delete(id))),
          { concurrency: SYNC_CONCURRENCY, discard: true }
        ),
        publishEngineStatusEvents(ctx, scope, entries)
      ],
      { concurrency: 2, discard: true }
    )
    if (unsure) view.jobs = yield* rebuildJobs(ctx, scope)
    return jobs.size > 0 || unsure
  })

/**
 * The state index after a batch. A page that cannot be encoded (over the MQTT connection's own
 * `maxPayloadBytes`, when the publisher's `maxPayloadBytes` is set higher) or that is over the
 * broker's Maximum Packet Size (counted as `tooLarge`) is logged and left out rather than failed,
 * since no retry can shrink it and the cursor must still move on.
 */
const indexScope = (ctx: PublisherContext, scope: string, view: ScopeView) =>
  publishStateIndex(ctx, scope, view).pipe(
    Effect.asVoid,
    Effect.catchTags({
      EncodeError: (e) =>
        Effect.logError("publisher: state index page not published; set the publisher's maxPayloadBytes to the MQTT connection's limit").pipe(
          Effect.annotateLogs({ scope, reason: e.message })
        ),
      MessageTooLarge: (e) =>
        Effect.logError("publisher: state index page not published; set the publisher's maxPayloadBytes below the broker's maximum packet size").pipe(
          Effect.annotateLogs({ scope, reason: e.message })
        )
    })
  )

/**
 * The state index once it is due and `stateIndexIntervalMs` has passed since the last one;
 * otherwise the milliseconds until it may go out (none when nothing is due). Every page of the
 * index is the whole scope, so publishing it after each batch cost the whole index per batch
 * (at 40 job orders/s and 2,000 jobs, 30 indexes of 160 KB a second, and the process's memory
 * grew with the churn); the order topics and status events still go out with every batch.
 */
export const indexIfDue = (ctx: PublisherContext, scope: string, view: ScopeView): Effect.Effect<Option.Option<number>, FollowFailure> =>
  Effect.gen(function* () {
    if (!view.indexDue) return Option.none()
    const now = yield* Clock.currentTimeMillis
    const wait = view.indexedAt + ctx.options.stateIndexIntervalMs - now
    if (wait > 0) return Option.some(wait)
    // A paced index may go out after its batch: the lease is checked again, as before every batch.
    yield* ctx.fence
    // Still due when it fails: the next round tries again.
    yield* indexScope(ctx, scope, view)
    view.indexDue = false
    view.indexedAt = now
    return Option.none()
  })

/**
 * Follows `changes:{scope}` from the saved cursor until it is drained. Per batch: check the
 * lease, publish the touched jobs, then save the cursor; a batch that touched a job (work master
 * changes share the stream) makes the state index due, published at once when the interval
 * allows ({@link indexIfDue}). A failure leaves the cursor where it was, so the batch is
 * published again on the next round (at-least-once; publishing is idempotent, and the rows are
 * read from the current documents, so a replay corrects them).
 *
 * The cursor is re-read from Valkey on every round, so an operator's reset (`admin publisher
 * republish`) takes effect without a restart; the state index rows are then rebuilt in full.
 */
export const drainScope = (ctx: PublisherContext, scope: string, view: ScopeView): Effect.Effect<void, FollowFailure> =>
  Effect.gen(function* () {
    let cursor = Option.getOrElse(yield* ctx.cursors.get(scope), () => "0")
    if (Option.isSome(view.cursor) && view.cursor.value !== cursor) {
      yield* Effect.logInfo("publisher: cursor moved by someone else; rebuilding the state index").pipe(Effect.annotateLogs({ scope }))
      view.jobs = yield* rebuildJobs(ctx, scope)
      view.cursor = Option.some(cursor)
    }
    for (;;) {
      const page = yield* ctx.changes.read(scope, { after: cursor, count: ctx.options.batchSize })
      // `next` moves past undecodable entries too, so a page may be empty and still advance.
      if (page.next === cursor) return
      if (page.entries.length > 0) {
        yield* ctx.fence
        if (yield* publishBatch(ctx, scope, page.entries, view)) {
          view.indexDue = true
          // Before the cursor moves when the interval allows (always at 0): a reader that sees the cursor sees the index.
          yield* indexIfDue(ctx, scope, view)
        }
      }
      yield* ctx.cursors.set(scope, page.next)
      view.cursor = Option.some(page.next)
      if (page.entries.length > 0) yield* ctx.stats.add("batches")
      cursor = page.next
    }
  })

/**
 * Republishes a scope from scratch: every listed job order's order topic (and result, when
 * finished), then the state index built from the same reads. Run when a session first sees a
 * scope (a publisher became active, or the broker started a new session), so a broker that lost
 * its retained store is refilled without waiting for changes. Returns the scope's view.
 */
export const republishScope = (ctx: PublisherContext, scope: string): Effect.Effect<ScopeView, FollowFailure> =>
  Effect.gen(function* () {
    yield* ctx.fence
    const cursor = yield* ctx.cursors.get(scope)
    const listed = yield* listedJobOrders(ctx, scope)
    const rows = yield* Effect.forEach(listed, ({ id, priority }) => syncJob(ctx, scope, id, { order: true }, Option.some(priority)), {
      concurrency: SYNC_CONCURRENCY
    })
    const view: ScopeView = {
      jobs: SortedJobs.of(rows.flatMap((row): ReadonlyArray<IndexedJob> => (Option.isSome(row) ? [row.value] : []))),
      pages: undefined,
      cursor,
      indexDue: false,
      indexedAt: yield* Clock.currentTimeMillis
    }
    yield* indexScope(ctx, scope, view)
    return view
  })
