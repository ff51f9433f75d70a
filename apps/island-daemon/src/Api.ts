import { Effect, Either } from "effect"
import { decodeJobOrderRecord, normalizedName } from "@microdcs/job-state"
import { JobOrderDao, JobResponseDao, ScopeRegistry, SfcStateDao } from "@microdcs/store"

/** A JSON reply of the read-only API. */
export interface ApiReply {
  readonly status: number
  readonly body: unknown
}

const ok = (body: unknown): ApiReply => ({ status: 200, body })
const notFound = (what: string): ApiReply => ({ status: 404, body: { error: "not-found", message: `${what} does not exist` } })
const badRequest = (message: string): ApiReply => ({ status: 400, body: { error: "bad-request", message } })

const pageSize = (query: URLSearchParams): number | undefined => {
  const text = query.get("limit")
  if (text === null) return 100
  const n = Number(text)
  return Number.isInteger(n) && n > 0 && n <= 1000 ? n : undefined
}

/**
 * The read-only JSON API (island.md §4), with cursor paging: `next` is the cursor of the following
 * page, `null` on the last one.
 *
 *   GET /api/scopes
 *   GET /api/scopes/{scope}/joborders?cursor=&limit=
 *   GET /api/joborders/{id}
 *   GET /api/scopes/{scope}/jobresponses?state=&cursor=&limit=
 *   GET /api/executions/{jobId}
 */
export const routeApi = (path: ReadonlyArray<string>, query: URLSearchParams) =>
  Effect.gen(function* () {
    const limit = pageSize(query)
    if (limit === undefined) return badRequest("limit must be an integer from 1 to 1000")
    const [first, second, third] = path
    if (first === "scopes" && second === undefined) {
      return ok({ items: yield* Effect.flatMap(ScopeRegistry, (s) => s.list), next: null })
    }
    if (first === "scopes" && second !== undefined && third === "joborders") {
      const offset = Number(query.get("cursor") ?? "0")
      if (!Number.isInteger(offset) || offset < 0) return badRequest("cursor must come from a previous page")
      const dao = yield* JobOrderDao
      const page = yield* dao.list(second, { offset, count: limit })
      const items = yield* Effect.forEach(page.items, (item) =>
        dao.get(item.id).pipe(
          Effect.map((doc) => {
            const decoded = decodeJobOrderRecord(doc.doc)
            return { id: item.id, priority: item.priority, version: doc.version, state: Either.isRight(decoded) ? normalizedName(decoded.right.state) : null }
          }),
          Effect.catchTag("NotFound", () => Effect.succeed({ id: item.id, priority: item.priority, version: null, state: null }))
        )
      )
      return ok({ items, next: page.next === null ? null : String(page.next) })
    }
    if (first === "joborders" && second !== undefined) {
      const doc = yield* Effect.flatMap(JobOrderDao, (dao) => dao.get(second)).pipe(Effect.option)
      if (doc._tag === "None") return notFound(`job order ${second}`)
      const decoded = decodeJobOrderRecord(doc.value.doc)
      return ok({
        id: second,
        scope: doc.value.scope,
        version: doc.value.version,
        state: Either.isRight(decoded) ? normalizedName(decoded.right.state) : null,
        document: JSON.parse(doc.value.doc) as unknown
      })
    }
    if (first === "scopes" && second !== undefined && third === "jobresponses") {
      const state = query.get("state")
      if (!state) return badRequest("state is required, e.g. state=Ended_Completed")
      const dao = yield* JobResponseDao
      const page = yield* dao.byState(second, state, query.get("cursor") ?? "0", limit)
      const docs = yield* dao.getMany(page.ids)
      return ok({ items: docs.map((d) => ({ id: d.id, version: d.version, document: JSON.parse(d.doc) as unknown })), next: page.next })
    }
    if (first === "executions" && second !== undefined) {
      const doc = yield* Effect.flatMap(SfcStateDao, (dao) => dao.get(second)).pipe(Effect.option)
      if (doc._tag === "None") return notFound(`execution ${second}`)
      return ok({ jobId: second, scope: doc.value.scope, version: doc.value.version, state: JSON.parse(doc.value.doc) as unknown })
    }
    return notFound(`/api/${path.join("/")}`)
  }).pipe(
    Effect.catchTag("InvalidInput", (e) => Effect.succeed(badRequest(`${e.field}: ${e.message}`))),
    Effect.catchAll((e) => Effect.succeed<ApiReply>({ status: 503, body: { error: e._tag, message: "store unavailable" } }))
  )
