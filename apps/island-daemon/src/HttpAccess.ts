import { createHash, timingSafeEqual } from "node:crypto"
import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { Effect, Redacted } from "effect"
import { HttpContext } from "./HttpContext.js"
import { errorReply } from "./HttpReply.js"

const digest = (text: string) => createHash("sha256").update(text).digest()

/**
 * Whether the request carries `Authorization: Bearer {token}`. Compared through digests in
 * constant time, so neither the token's length nor its prefix leaks through timing.
 */
const authorized = (authorization: string | undefined, token: Redacted.Redacted<string> | undefined): boolean => {
  if (token === undefined) return true
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")
  return match !== null && timingSafeEqual(digest(match[1]!), digest(Redacted.value(token)))
}

/**
 * Wraps a route's handler: with a configured token, a request without it (or with another one)
 * gets 401 and the handler does not run. A route module applies it to each of its routes
 * through `tokenRoute`.
 */
export const requireToken = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.gen(function* () {
    const { token } = yield* HttpContext
    const request = yield* HttpServerRequest.HttpServerRequest
    if (authorized(request.headers["authorization"], token)) return yield* handler
    return yield* errorReply(401, "unauthorized", "this path needs Authorization: Bearer {HTTP_TOKEN}", { "www-authenticate": 'Bearer realm="island"' })
  })

/** A `GET` route whose handler runs behind `requireToken`. */
export const tokenRoute = <E, R>(path: HttpRouter.PathInput, handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  HttpRouter.route("GET", path, requireToken(handler))
