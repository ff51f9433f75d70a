import { Effect } from "effect"
import type { JobOrderSearchFilter } from "@microdcs/store"
import { ActionRefused, MAX_ACTION_COMMENT } from "./ConsoleActions.js"
import { bulkActions, DEFAULT_BULK_BATCH, isBulkAction, MAX_BULK_BATCH, runBulkBatch } from "./ConsoleBulk.js"
import { HttpCaller } from "./HttpAccess.js"
import { callerOrigin, jsonBody, refusal, textField } from "./HttpConsoleActions.js"
import { badRequest, badRequestListing, type ConsoleReply, consoleReply, ok, param } from "./HttpConsoleReply.js"
import { SEARCH_FILTER_NAMES, searchRequest } from "./HttpConsoleSearch.js"
import { actionRoute } from "./HttpWriteGuard.js"

const FIELDS = ["query", "after", "batch", "comment"]

/** The query's names a search reads (`after` and `limit` are the batch's own, not the query's). */
const FILTER_NAMES: ReadonlyArray<string> = SEARCH_FILTER_NAMES

const optionalText = (body: Record<string, unknown>, name: string, problems: Array<string>): string | undefined => {
  const text = textField(body, name, problems)
  return text === "" ? undefined : text
}

/** Whether the search names anything at all: an empty value or an unknown name filters nothing. */
const filters = (filter: JobOrderSearchFilter): boolean => Object.values(filter).some((v) => v !== undefined)

/** The batch a body asks for, with every problem of it (the search's own among them). */
const batchRequest = (body: Record<string, unknown>) => {
  const problems: Array<string> = []
  const unknown = Object.keys(body).filter((k) => !FIELDS.includes(k))
  if (unknown.length > 0) problems.push(`unknown field${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")}: the fields are ${FIELDS.join(", ")}`)
  const params = new URLSearchParams(optionalText(body, "query", problems) ?? "")
  const strange = [...new Set(params.keys())].filter((name) => !FILTER_NAMES.includes(name))
  if (strange.length > 0) problems.push(`query: unknown filter${strange.length === 1 ? "" : "s"} ${strange.join(", ")}: the filters are ${FILTER_NAMES.join(", ")}`)
  const search = searchRequest(params)
  problems.push(...search.problems)
  // Every job order of the island is never one click away: a bulk action names what it acts on.
  if (!filters(search.filter)) problems.push("query: name at least one filter (a bulk action never runs on every job order of the island)")
  const batch = body["batch"] ?? DEFAULT_BULK_BATCH
  if (typeof batch !== "number" || !Number.isInteger(batch) || batch < 1 || batch > MAX_BULK_BATCH) problems.push(`batch must be a whole number from 1 to ${MAX_BULK_BATCH}`)
  const comment = optionalText(body, "comment", problems)
  if (comment !== undefined && comment.length > MAX_ACTION_COMMENT) problems.push(`the comment is ${comment.length} characters long, at most ${MAX_ACTION_COMMENT}`)
  return { problems, filter: search.filter, after: optionalText(body, "after", problems), batch: batch as number, comment }
}

/** Who ran a bulk batch, from where, on what, in the daemon's log (each job's own change names them too). */
const logBatch = (action: string, query: unknown, outcomes: number) =>
  Effect.flatMap(HttpCaller, (caller) =>
    Effect.logInfo("bulk action batch from the console").pipe(Effect.annotateLogs({ by: `console:${caller.user}`, from: caller.from ?? "", action, query: String(query ?? ""), outcomes }))
  )

const bulkBatch = Effect.gen(function* () {
  const action = yield* param("action")
  if (!isBulkAction(action)) return { status: 404, body: { error: "unknown-action", message: `${action} is not one of ${bulkActions.join(", ")}` } } satisfies ConsoleReply
  const read = yield* jsonBody
  if (read.body === undefined) return badRequest(read.problem)
  const request = batchRequest(read.body)
  if (request.problems.length > 0) return badRequestListing(request.problems)
  const origin = yield* callerOrigin(request.comment)
  return yield* runBulkBatch({ action, filter: request.filter, after: request.after, batch: request.batch, origin, comment: request.comment }).pipe(
    Effect.tap((done) => logBatch(action, read.body["query"], done.outcomes.length)),
    Effect.map((done) => ok({ ok: true, ...done })),
    Effect.catchIf(
      (e): e is ActionRefused => e instanceof ActionRefused,
      (e) => Effect.succeed(refusal(e))
    ),
    Effect.catchTag("InvalidInput", (e) => Effect.succeed(badRequest(`${e.field}: ${e.message}`)))
  )
})

/**
 * `POST /api/console/bulk/{abort|clear|retry}` `{query, after?, batch?, comment?}`: the action on
 * one batch of the job orders `query` (the search's query string, as `/api/console/search` takes
 * it) finds from `after`; answers `{ok, outcomes, next, total, totalExact}`. The page calls it
 * again with `next` until it is `null`, showing the progress. An operator's same-origin JSON POST.
 */
export const consoleBulkRoutes = [actionRoute("/api/console/bulk/:action", consoleReply(bulkBatch))] as const
