import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { HttpCaller, requireToken } from "./HttpAccess.js"
import { HttpContext } from "./HttpContext.js"
import { errorReply } from "./HttpReply.js"

/**
 * Why a write does not come from a page of this server, or `undefined`. A browser sends
 * `Sec-Fetch-Site` and, on a POST, `Origin`; a cross-site page's request is refused by either. A
 * client that sends neither (curl, a script) is no browser another site could drive, and its
 * token already says who it is.
 */
export const crossSiteProblem = (headers: Readonly<Record<string, string | undefined>>): string | undefined => {
  const site = headers["sec-fetch-site"]
  if (site !== undefined && site !== "same-origin") return `the request comes from another site (Sec-Fetch-Site: ${site})`
  const origin = headers["origin"]
  if (origin === undefined) return undefined
  let host: string
  try {
    host = new URL(origin).host
  } catch {
    return `the request comes from an unknown origin (Origin: ${origin})`
  }
  return host === headers["host"] ? undefined : `the request comes from ${origin}, not from this server (${headers["host"] ?? "no Host"})`
}

const isJson = (contentType: string | undefined): boolean => /^application\/json\s*(;.*)?$/i.test(contentType ?? "")

/**
 * The checks of every action, in order: a known token (401), an operator's (403 `forbidden`; with
 * no operator configured, 403 `actions-off`), from a page of this server (403 `cross-site`),
 * with a JSON body (415 `json-required`). A refused request runs nothing.
 */
const guarded = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  requireToken(
    Effect.gen(function* () {
      const caller = yield* HttpCaller
      const { users } = yield* HttpContext
      const request = yield* HttpServerRequest.HttpServerRequest
      if (!users.some((u) => u.role === "operator")) {
        return yield* errorReply(403, "actions-off", "no operator is configured: set HTTP_OPERATOR_TOKEN or an operator in HTTP_TOKEN_FILE")
      }
      if (caller.role !== "operator") return yield* errorReply(403, "forbidden", `${caller.user} is a ${caller.role}: actions need an operator's token`)
      const crossSite = crossSiteProblem(request.headers)
      if (crossSite !== undefined) return yield* errorReply(403, "cross-site", crossSite)
      if (!isJson(request.headers["content-type"])) return yield* errorReply(415, "json-required", "send the body as Content-Type: application/json")
      return yield* handler
    })
  )

/** A `POST` route for an action: its handler runs only for an operator's same-origin JSON request. */
export const actionRoute = <E, R>(path: HttpRouter.PathInput, handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  HttpRouter.route("POST", path, guarded(handler))
