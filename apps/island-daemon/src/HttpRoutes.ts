import { HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Cause, Deferred, Effect } from "effect"
import { API_PREFIX, apiNotFound, apiRoutes } from "./Api.js"
import { HttpContext } from "./HttpContext.js"
import { executionRoutes } from "./HttpExecutions.js"
import { recipeRoutes } from "./HttpRecipes.js"
import { triggerRoutes } from "./HttpTriggers.js"
import { consoleRoutes } from "./HttpConsole.js"
import { consoleApiRoutes } from "./HttpConsoleApi.js"
import { consoleActionRoutes } from "./HttpConsoleActions.js"
import { consoleBulkRoutes } from "./HttpConsoleBulk.js"
import { healthRoutes } from "./HttpHealth.js"
import { journalRoutes } from "./HttpJournal.js"
import { metricsRoutes } from "./HttpMetrics.js"
import { commonHeaders, errorReply } from "./HttpReply.js"

/**
 * Every read route of the daemon (`HttpRouter.Route`s, each a GET with its `path`), one module
 * per group. A new group (the console's pages, an event stream) is one more list here; the
 * read-only test walks this list.
 */
export const daemonRoutes = [
  ...healthRoutes,
  ...metricsRoutes,
  ...apiRoutes,
  ...consoleRoutes,
  ...consoleApiRoutes,
  ...journalRoutes,
  ...executionRoutes,
  ...recipeRoutes,
  ...triggerRoutes
] as const

/**
 * The only routes that change the island: the console's actions, each a POST behind an
 * operator's token and a same-origin check (`actionRoute`).
 */
export const actionRoutes = [...consoleActionRoutes, ...consoleBulkRoutes] as const

/** The methods every path answers; a POST only on an action route. */
export const readMethods: ReadonlyArray<string> = ["GET", "HEAD"]

/** A write no action route takes: 405, as every write was before there were actions. */
const methodNotAllowed = errorReply(405, "method-not-allowed", undefined, { allow: readMethods.join(", ") })

/**
 * Paths match exactly (case-sensitive) and an id may be as long as the store takes (longer ones
 * are the store's 400, not a missing route).
 */
const routerConfig = { caseSensitive: true, maxParamLength: 16_384 }

/** A GET no route matches: the API's own answer under `/api/`, else 404. */
const notFound = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
  request.url.startsWith(API_PREFIX) ? apiNotFound : errorReply(404, "not-found")
)

/** The router's failure for a path no route matches (answered by `notFound`). */
const isRouteNotFound = (e: unknown): boolean => HttpServerError.isHttpServerError(e) && e.reason._tag === "RouteNotFound"

/** A failure no route handled: logged, and 500 (an interrupted request, a client gone, has no answer). */
const internalError = <E>(cause: Cause.Cause<E>) =>
  Cause.hasInterruptsOnly(cause)
    ? Effect.failCause(cause)
    : Effect.logError("http request failed").pipe(
        Effect.annotateLogs({ cause: Cause.pretty(cause) }),
        Effect.andThen(errorReply(500, "internal", String(Cause.squash(cause))))
      )

/** Adds the common headers, and `Connection: close` once the server is closing. */
const finish = (response: HttpServerResponse.HttpServerResponse) =>
  Effect.gen(function* () {
    const { closing } = yield* HttpContext
    const answer = HttpServerResponse.setHeaders(response, commonHeaders)
    return (yield* Deferred.isDone(closing)) ? HttpServerResponse.setHeader(answer, "connection", "close") : answer
  })

/**
 * The daemon's HTTP app: any method but GET, HEAD and POST is 405 before routing (so no handler
 * runs for it), and a POST that no action route matches is 405 too; then the routes. Every answer
 * has the common headers, and while the server closes it asks the client to close the
 * connection so none lingers idle.
 */
export const daemonApp = Effect.gen(function* () {
  // The router reads its configuration when it is built.
  const routed = yield* HttpRouter.toHttpEffect(HttpRouter.addAll([...daemonRoutes, ...actionRoutes])).pipe(Effect.provideService(HttpRouter.RouterConfig, routerConfig))
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const write = request.method === "POST"
    if (!write && !readMethods.includes(request.method)) return yield* methodNotAllowed
    return yield* routed.pipe(Effect.catchIf(isRouteNotFound, () => (write ? methodNotAllowed : notFound)))
  }).pipe(
    Effect.catchCause(internalError),
    Effect.flatMap(finish)
  )
})
