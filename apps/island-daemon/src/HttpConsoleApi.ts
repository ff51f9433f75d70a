import { Effect } from "effect"
import { configView } from "./ConsoleConfigView.js"
import { islandView } from "./ConsoleIslandView.js"
import { jobView } from "./ConsoleJobView.js"
import { scopeCursorProblem, scopeJobOrders } from "./ConsoleScopeView.js"
import { streamsView } from "./ConsoleStreamsView.js"
import { HttpCaller, tokenRoute } from "./HttpAccess.js"
import { consoleEvents } from "./HttpConsoleEvents.js"
import { consoleHistory } from "./HttpConsoleHistory.js"
import { incidentsRoute } from "./HttpConsoleIncidents.js"
import { badRequest, consoleReply, LIMIT_PROBLEM, notFound, ok, pageLimit, param, query } from "./HttpConsoleReply.js"
import { HttpContext, withIsland } from "./HttpContext.js"
import { jsonReply } from "./HttpReply.js"
import { consoleSearchCountRoute, consoleSearchRoute } from "./HttpConsoleSearch.js"

const island = Effect.gen(function* () {
  const context = yield* HttpContext
  const running = context.island()
  // withIsland has answered 503 already when the island is away.
  if (running === undefined) return { status: 503, body: { error: "not-ready" } }
  return ok(yield* islandView(running.readiness, context.metrics))
})

const scopeOrders = Effect.gen(function* () {
  const q = yield* query
  const limit = pageLimit(q)
  if (limit === undefined) return badRequest(LIMIT_PROBLEM)
  const id = q.get("id")
  const state = q.get("state")
  const scopeQuery = { cursor: q.get("cursor") ?? "0", limit, id: id === null || id === "" ? undefined : id, state: state === null || state === "" ? undefined : state }
  const problem = scopeCursorProblem(scopeQuery)
  return problem !== undefined ? badRequest(problem) : ok(yield* scopeJobOrders(yield* param("scope"), scopeQuery))
})

const job = Effect.gen(function* () {
  const id = yield* param("id")
  const view = yield* jobView(id)
  return view === null ? notFound(`job order ${id}`) : ok(view)
})

/** Who the page's token names and whether it may act: the page shows action controls only then. */
const me = Effect.gen(function* () {
  const caller = yield* HttpCaller
  const { users } = yield* HttpContext
  const operators = users.some((u) => u.role === "operator")
  return yield* jsonReply(200, { user: caller.user, role: caller.role, actions: operators && caller.role === "operator" })
})

/**
 * The console's read routes, behind the token when one is set; every one a GET that reads.
 *
 *   GET /api/console/me                      {user, role, actions}: who the token names, whether it may act
 *   GET /api/console/island
 *   GET /api/console/scopes/{scope}/joborders?state=&id=&cursor=&limit=
 *   GET /api/console/jobs/{id}
 *   GET /api/console/search?scope=&idPrefix=&state=&workMaster=&createdFrom=&createdTo=&endedFrom=&endedTo=&priorityMin=&priorityMax=&error=&after=&limit=
 *   GET /api/console/search/count?(the same filters)
 *   GET /api/console/config
 *   GET /api/console/streams
 *   GET /api/console/history?scope=&window=24h|6h|1h&step=1m|5m|15m
 *   GET /api/console/incidents?kind=&scope=&after=&limit=
 *   GET /api/console/events?scope=&job=&figures=1&max=&after=   (Server-Sent Events)
 */
export const consoleApiRoutes = [
  tokenRoute("/api/console/me", me),
  tokenRoute("/api/console/island", consoleReply(island)),
  tokenRoute("/api/console/scopes/:scope/joborders", consoleReply(scopeOrders)),
  tokenRoute("/api/console/jobs/:id", consoleReply(job)),
  consoleSearchRoute,
  consoleSearchCountRoute,
  tokenRoute("/api/console/config", consoleReply(Effect.map(configView, ok))),
  tokenRoute("/api/console/streams", consoleReply(Effect.map(streamsView, ok))),
  tokenRoute("/api/console/history", consoleReply(consoleHistory)),
  incidentsRoute,
  tokenRoute("/api/console/events", withIsland(consoleEvents))
] as const
