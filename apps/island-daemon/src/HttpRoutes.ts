import { HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Cause, Deferred, Effect } from "effect"
import { API_PREFIX, apiNotFound, apiRoutes } from "./Api.js"
import { HttpContext } from "./HttpContext.js"
import { executionRoutes } from "./HttpExecutions.js"
import { recipeRoutes } from "./HttpRecipes.js"
import { triggerRoutes } from "./HttpTriggers.js"
import { consoleRoutes } from "./HttpConsole.js"
import { consoleApiRoutes } from "./HttpConsoleApi.js"
import { healthRoutes } from "./HttpHealth.js"
import { journalRoutes } from "./HttpJournal.js"
import { metricsRoutes } from "./HttpMetrics.js"
import { commonHeaders, errorReply } from "./HttpReply.js"

/**
 * Every route of the daemon (`HttpRouter.Route`s, each with its `method` and `path`), one module
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

/** The methods the server answers: nothing it serves changes the island. */
export const readMethods: ReadonlyArray<string> = ["GET", "HEAD"]

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
 * The daemon's HTTP app: any method but GET and HEAD is 405 before routing (so no handler runs
 * for a write), then the routes; every answer has the common headers, and while the server
 * closes it asks the client to close the connection so none lingers idle.
 */
export const daemonApp = Effect.gen(function* () {
  // The router reads its configuration when it is built.
  const routed = yield* HttpRouter.toHttpEffect(HttpRouter.addAll(daemonRoutes)).pipe(Effect.provideService(HttpRouter.RouterConfig, routerConfig))
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!readMethods.includes(request.method)) return yield* errorReply(405, "method-not-allowed", undefined, { allow: readMethods.join(", ") })
    return yield* routed.pipe(Effect.catchIf(isRouteNotFound, () => notFound))
  }).pipe(
    Effect.catchCause(internalError),
    Effect.flatMap(finish)
  )
})
