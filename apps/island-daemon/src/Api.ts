import { HttpRouter, HttpServerRequest } from "effect/http"
import { Effect, Result } from "effect"
import { decodeJobOrderRecord, normalizedName } from "@microdcs/job-state"
import { listJobOrders } from "@microdcs/job-control"
import { InvalidInput, JobOrderDao, JobResponseDao, ScopeRegistry, SfcStateDao } from "@microdcs/store"
import { jobOrderRow } from "./JobOrderRow.js"
import { jobOrdersInState } from "./ScopeStateSearch.js"
import { jobResponseView } from "./JobResponseView.js"
import { requireToken, tokenRoute } from "./HttpAccess.js"
import { withIsland } from "./HttpContext.js"
import { jsonReply } from "./HttpReply.js"

/** A JSON answer of the read-only API. */
interface ApiReply {
  readonly status: number
  readonly body: unknown
}

const ok = (body: unknown): ApiReply => ({ status: 200, body })
const notFound = (what: string): ApiReply => ({ status: 404, body: { error: "not-found", message: `${what} does not exist` } })
const badRequest = (message: string): ApiReply => ({ status: 400, body: { error: "bad-request", message } })

/** The query string, read as the standard URL parser does (`+` is a space). */
const query = Effect.map(HttpServerRequest.HttpServerRequest, (request) => new URL(request.url, "http://localhost").searchParams)

/** A path parameter of the matched route, percent-decoded by the router. */
const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

const pageSize = (q: URLSearchParams): number | undefined => {
  const text = q.get("limit")
  if (text === null) return 100
  const n = Number(text)
  return Number.isInteger(n) && n > 0 && n <= 1000 ? n : undefined
}

const LIMIT_PROBLEM = "limit must be an integer from 1 to 1000"

/**
 * One API route's answer over the running island (503 while it starts or stops): a refused input
 * 400 naming the field, any other store failure 503.
 */
const islandReply = <E extends { readonly _tag: string }, R>(answer: Effect.Effect<ApiReply, E, R>) =>
  withIsland(
    answer.pipe(
      Effect.catch((e) =>
        Effect.succeed<ApiReply>(e instanceof InvalidInput ? badRequest(`${e.field}: ${e.message}`) : { status: 503, body: { error: e._tag, message: "store unavailable" } })
      ),
      Effect.flatMap((reply) => jsonReply(reply.status, reply.body))
    )
  )

const scopes = Effect.gen(function* () {
  return ok({ items: yield* Effect.flatMap(ScopeRegistry, (s) => s.list), next: null })
})

const jobOrdersOfScope = Effect.gen(function* () {
  const q = yield* query
  const limit = pageSize(q)
  if (limit === undefined) return badRequest(LIMIT_PROBLEM)
  const state = q.get("state")
  // A state filter reads the search index (newest first, with the total): never a scan of the list.
  if (state) return ok(yield* jobOrdersInState(yield* param("scope"), state, q.get("cursor") ?? "0", limit))
  const offset = Number(q.get("cursor") ?? "0")
  if (!Number.isInteger(offset) || offset < 0) return badRequest("cursor must come from a previous page")
  // The documents of the page in one pipelined read: one read per job order, one after the other,
  // took seconds for a page of 1000 while the daemon was busy.
  const page = yield* listJobOrders(yield* param("scope"), { offset, limit })
  return ok({ items: page.items.map(jobOrderRow), next: page.next === null ? null : String(page.next) })
})

const jobOrder = Effect.gen(function* () {
  const id = yield* param("id")
  const doc = yield* Effect.flatMap(JobOrderDao, (dao) => dao.get(id)).pipe(Effect.option)
  if (doc._tag === "None") return notFound(`job order ${id}`)
  const decoded = decodeJobOrderRecord(doc.value.doc)
  return ok({
    id,
    scope: doc.value.scope,
    version: doc.value.version,
    state: Result.isSuccess(decoded) ? normalizedName(decoded.success.state) : null,
    document: JSON.parse(doc.value.doc) as unknown
  })
})

const jobResponsesOfScope = Effect.gen(function* () {
  const q = yield* query
  const limit = pageSize(q)
  if (limit === undefined) return badRequest(LIMIT_PROBLEM)
  const state = q.get("state")
  if (!state) return badRequest("state is required, e.g. state=Ended_Completed")
  const dao = yield* JobResponseDao
  const page = yield* dao.byState(yield* param("scope"), state, q.get("cursor") ?? "0", limit)
  const docs = yield* dao.getMany(page.ids)
  return ok({ items: docs.map((d) => ({ id: d.id, version: d.version, ...jobResponseView(d.doc) })), next: page.next })
})

const execution = Effect.gen(function* () {
  const jobId = yield* param("jobId")
  const doc = yield* Effect.flatMap(SfcStateDao, (dao) => dao.get(jobId)).pipe(Effect.option)
  if (doc._tag === "None") return notFound(`execution ${jobId}`)
  return ok({ jobId, scope: doc.value.scope, version: doc.value.version, state: JSON.parse(doc.value.doc) as unknown })
})

/**
 * The read-only JSON API, behind the token when one is set, with cursor paging:
 * `next` is the cursor of the following page, `null` on the last one.
 *
 *   GET /api/scopes
 *   GET /api/scopes/{scope}/joborders?state=&cursor=&limit=   (with state: from the search index, newest first, with total)
 *   GET /api/joborders/{id}
 *   GET /api/scopes/{scope}/jobresponses?state=&cursor=&limit=
 *   GET /api/executions/{jobId}
 */
export const apiRoutes = [
  tokenRoute("/api/scopes", islandReply(scopes)),
  tokenRoute("/api/scopes/:scope/joborders", islandReply(jobOrdersOfScope)),
  tokenRoute("/api/joborders/:id", islandReply(jobOrder)),
  tokenRoute("/api/scopes/:scope/jobresponses", islandReply(jobResponsesOfScope)),
  tokenRoute("/api/executions/:jobId", islandReply(execution))
] as const

/** Where the API's routes live: a path under it that no route matches is answered by `apiNotFound`. */
export const API_PREFIX = "/api/"

/**
 * A path under `/api/` that no route matches: 401 without the token, 503 while the island starts
 * or stops (as for every API path), 400 for a malformed percent-encoding, else 404 naming it.
 */
export const apiNotFound = requireToken(
  islandReply(
    Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
      const pathname = new URL(request.url, "http://localhost").pathname
      try {
        const segments = pathname.slice(API_PREFIX.length).split("/").filter((p) => p.length > 0).map(decodeURIComponent)
        return notFound(`/api/${segments.join("/")}`)
      } catch {
        return badRequest("malformed percent-encoding in the path")
      }
    })
  )
)
