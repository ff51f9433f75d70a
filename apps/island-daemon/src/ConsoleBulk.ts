import { Effect, Option } from "effect"
import type { Origin } from "@microdcs/job-state"
import { JobOrderSearch, type JobOrderSearchFilter, type JobOrderSearchItem, SfcStateDao } from "@microdcs/store"
import { ActionRefused, retryJobAction, runJobAction } from "./ConsoleActions.js"
import { retryableActions } from "./ConsoleJobAudit.js"

/**
 * Bulk actions on a search: one bounded batch at a time. A batch is one page of the search (from
 * the caller's cursor) with the action run on each job order of it, a few at once, and every job's
 * outcome listed; the caller goes on with `next` until it is `null`. The search's cursor is a
 * position in the index, not an offset, so the jobs a batch moved out of the filter (an abort of
 * `state=Running`) do not shift the next page. Stateless on the server: a batch that is never
 * followed leaves nothing behind, and each job went through the same path as a single action.
 */

export const bulkActions = ["abort", "clear", "retry"] as const
export type BulkAction = (typeof bulkActions)[number]
export const isBulkAction = (name: string): name is BulkAction => (bulkActions as ReadonlyArray<string>).includes(name)

/** Job orders per batch: the default, and the most one batch takes. */
export const DEFAULT_BULK_BATCH = 100
export const MAX_BULK_BATCH = 200
/** Job orders acted on at once within a batch: bounded, so a bulk action does not crowd out the MES. */
const CONCURRENCY = 8

export interface BulkBatch {
  readonly action: BulkAction
  readonly filter: JobOrderSearchFilter
  readonly after?: string | undefined
  readonly batch: number
  readonly origin: Origin
  readonly comment?: string | undefined
}

/** One job's outcome: `done` (with the state it moved to, or the actions sent again), `refused` (why), `skipped` (nothing to do). */
export interface BulkOutcome {
  readonly scope: string
  readonly id: string
  readonly outcome: "done" | "refused" | "skipped"
  readonly state?: string | null
  readonly retried?: ReadonlyArray<string>
  readonly error?: string
  readonly message?: string
}

const errorText = (e: unknown): string => (typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e))

const refusedOutcome = (item: JobOrderSearchItem, e: ActionRefused): BulkOutcome => ({ scope: item.scope, id: item.id, outcome: "refused", error: e.code, message: e.message })

/** An execution state as stored; one that is not JSON is that job's refusal, not the batch's failure. */
const parsedState = (doc: string) =>
  Effect.try({
    try: () => JSON.parse(doc) as Parameters<typeof retryableActions>[0],
    catch: () => new ActionRefused({ code: "malformed-execution", status: 409, message: "the job's execution state cannot be read" })
  })

/** Sends the open actions of the job's execution again; `skipped` when it has none. */
const retryOpenActions = (item: JobOrderSearchItem, origin: Origin, reason: string) =>
  Effect.gen(function* () {
    const stored = yield* Effect.flatMap(SfcStateDao, (dao) => dao.get(item.id)).pipe(Effect.option)
    const state = Option.isSome(stored) ? yield* parsedState(stored.value.doc) : null
    const open = retryableActions(state)
    if (open.length === 0) return { scope: item.scope, id: item.id, outcome: "skipped", message: "no open action to send again" } satisfies BulkOutcome
    yield* Effect.forEach(open, (action) => retryJobAction({ id: item.id, action, origin, reason }), { discard: true })
    return { scope: item.scope, id: item.id, outcome: "done", retried: open } satisfies BulkOutcome
  })

/** A job's run with its refusal or failure as its outcome (a bulk action goes on past a refused job). */
const settle = <E, R>(item: JobOrderSearchItem, run: Effect.Effect<BulkOutcome, E, R>) =>
  run.pipe(
    Effect.catchIf(
      (e): e is E & ActionRefused => e instanceof ActionRefused,
      (e) => Effect.succeed(refusedOutcome(item, e))
    ),
    // A store failure on one job is that job's outcome; the others of the batch still run.
    Effect.catch((e) => Effect.succeed({ scope: item.scope, id: item.id, outcome: "refused", error: "failed", message: errorText(e) } satisfies BulkOutcome))
  )

/** The action on one job order: Abort or Clear through job control, or its open actions sent again. */
const actOn = (input: BulkBatch, item: JobOrderSearchItem) =>
  Effect.gen(function* () {
    if (input.action === "retry") return yield* settle(item, retryOpenActions(item, input.origin, input.comment ?? ""))
    const method = input.action === "abort" ? "Abort" : "Clear"
    const done = runJobAction({ scope: item.scope, id: item.id, method, origin: input.origin, comment: input.comment })
    return yield* settle(item, Effect.map(done, (d): BulkOutcome => ({ scope: item.scope, id: item.id, outcome: "done", state: d.state })))
  })

/**
 * Runs `input.action` on one page of the search: `{ outcomes, next, total, totalExact }`, `next`
 * where the following batch goes on (`null`: the search is done). A retry needs a comment.
 */
export const runBulkBatch = (input: BulkBatch) =>
  Effect.gen(function* () {
    if (input.action === "retry" && (input.comment ?? "").trim() === "") {
      return yield* new ActionRefused({ code: "invalid", status: 400, message: "say why in the comment (it is recorded with who did it)" })
    }
    const search = yield* JobOrderSearch
    const page = yield* search.search(input.filter, { limit: input.batch, ...(input.after === undefined ? {} : { after: input.after }) })
    const outcomes = yield* Effect.forEach(page.items, (item) => actOn(input, item), { concurrency: CONCURRENCY })
    return { action: input.action, outcomes, next: page.next, total: page.total, totalExact: page.totalExact }
  })
