import { Clock, Effect, Result, Option } from "effect"
import type { MqttSubscribeError, PublishFailure } from "@microdcs/cloudevents-mqtt"
import type { ConnectionError, InvalidInput, JobOrderPage, WrongType } from "@microdcs/store"
import { readJob, rowOf } from "./JobView.js"
import type { PublisherContext } from "./PublisherContext.js"
import { stateIndexEvent, type StateIndex } from "./PublisherEvents.js"
import { stateIndexPageTopic, stateIndexTopic } from "./PublisherTopics.js"
import { retain, retainReplacing, unretain } from "./RetainedTopics.js"
import { type IndexedJob, SortedJobs } from "./SortedJobs.js"
import { paginate } from "./StateIndexPages.js"

/** Job orders read at once while building an index. */
const READ_CONCURRENCY = 16
/** Ids per list page. */
const LIST_PAGE = 500

/**
 * What an active session knows of one scope: the state index rows, kept up to date from the
 * change entries it publishes, how many pages it last retained (so the ones no longer needed
 * are deleted; undefined before its first index, when the broker's head tells how many an
 * earlier session left), and the cursor it last saved (a different one in Valkey means someone
 * reset it: the rows are rebuilt from the list). `indexDue` and `indexedAt` pace the index:
 * a batch that touched a job makes one due, and one goes out at most every
 * `stateIndexIntervalMs`.
 */
export interface ScopeView {
  jobs: SortedJobs
  pages: number | undefined
  cursor: Option.Option<string>
  indexDue: boolean
  indexedAt: number
}

/** Most pages an index may claim; a retained head claiming more is not believed. */
const MAX_PAGES = 1_000_000

/** The page count of a retained head, 1 when it carries none that makes sense. */
const pagesOf = (data: unknown): number => {
  const pages = typeof data === "object" && data !== null ? (data as { pages?: unknown }).pages : undefined
  return typeof pages === "number" && Number.isInteger(pages) && pages >= 1 && pages <= MAX_PAGES ? pages : 1
}

export interface ListedJob {
  readonly id: string
  readonly priority: number
}

/**
 * Every listed job order of a scope with its priority, highest first. A job that moves between
 * two pages may be seen twice; the first place wins (the change entry of the move corrects it).
 */
export const listedJobOrders = (ctx: PublisherContext, scope: string): Effect.Effect<ReadonlyArray<ListedJob>, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const jobs = new Map<string, ListedJob>()
    let offset: number | null = 0
    while (offset !== null) {
      const page: JobOrderPage = yield* ctx.jobOrders.list(scope, { offset, count: LIST_PAGE })
      for (const item of page.items) if (!jobs.has(item.id)) jobs.set(item.id, item)
      offset = page.next
    }
    return [...jobs.values()]
  })

/** The jobs of a scope's state index, read in full: one read per listed job. */
export const rebuildJobs = (ctx: PublisherContext, scope: string): Effect.Effect<SortedJobs, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const listed = yield* listedJobOrders(ctx, scope)
    const rows = yield* Effect.forEach(
      listed,
      ({ id, priority }) =>
        readJob(ctx, scope, id, Option.some(priority)).pipe(
          Effect.tap((view) =>
            view._tag === "Malformed"
              ? Effect.logWarning("publisher: malformed job order left out of the state index").pipe(
                  Effect.annotateLogs({ scope, jobOrderId: id, reason: view.reason })
                )
              : Effect.void
          ),
          Effect.map((view) => rowOf(id, view))
        ),
      { concurrency: READ_CONCURRENCY }
    )
    return SortedJobs.of(rows.flatMap((row): ReadonlyArray<IndexedJob> => (Option.isSome(row) ? [row.value] : [])))
  })

/**
 * Retains a scope's state index from the view's rows: the pages after the head first, then the
 * head, then zero-byte messages on the pages the previous index had and this one has not. A
 * reader that finds the head with `seq` N therefore finds pages of N (or newer) beside it. The
 * sequence number is taken when the rows are final, so a higher `seq` never describes an older
 * state read by this publisher.
 *
 * The first index a session publishes for a scope reads the head it replaces, so pages that an
 * earlier session (another instance, before a failover or restart) left are deleted too.
 *
 * An index that cannot be cut into pages (one row over the limit) is logged and not published.
 */
export const publishStateIndex = (
  ctx: PublisherContext,
  scope: string,
  view: ScopeView
): Effect.Effect<ReadonlyArray<StateIndex>, InvalidInput | WrongType | ConnectionError | PublishFailure | MqttSubscribeError> =>
  Effect.gen(function* () {
    const topic = stateIndexTopic(ctx.options, scope)
    // A scope with no topic fails here, before it consumes a sequence number.
    yield* Effect.fromResult(topic)
    const seq = yield* ctx.cursors.nextSequence(scope)
    const header = { seq, scope, published_at: new Date(yield* Clock.currentTimeMillis).toISOString() }
    const pages = paginate(header, view.jobs.rows(), ctx.options.maxPayloadBytes)
    if (Result.isFailure(pages)) {
      yield* Effect.logError("publisher: state index not published").pipe(Effect.annotateLogs({ scope, reason: pages.failure }))
      return []
    }
    const [head, ...rest] = pages.success
    for (const page of rest) yield* retain(ctx, stateIndexPageTopic(ctx.options, scope, page.page), stateIndexEvent(ctx.options.source, page))
    const headEvent = stateIndexEvent(ctx.options.source, head!)
    const before =
      view.pages !== undefined
        ? yield* Effect.as(retain(ctx, topic, headEvent), view.pages)
        : Option.match(yield* retainReplacing(ctx, topic, headEvent), { onNone: () => 1, onSome: (previous) => pagesOf(previous.data) })
    for (let stale = pages.success.length; stale < before; stale++) yield* unretain(ctx, stateIndexPageTopic(ctx.options, scope, stale))
    view.pages = pages.success.length
    return pages.success
  })
