import { createHash, timingSafeEqual } from "node:crypto"
import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { Context, Effect, Option, Redacted } from "effect"
import { HttpContext } from "./HttpContext.js"
import { errorReply } from "./HttpReply.js"
import type { HttpRole, HttpUser } from "./HttpUsers.js"

/** Who sent the request, as its handler sees it: the user its token names, its role, its address. */
export class HttpCaller extends Context.Service<
  HttpCaller,
  {
    /** The token's user (`viewer`, `operator`, a token file's name); `anonymous` when no token is configured. */
    readonly user: string
    readonly role: HttpRole
    /** The peer's address as the socket reports it (a proxy's, behind one); `undefined` when unknown. */
    readonly from: string | undefined
  }
>()("@microdcs/island-daemon/HttpCaller") {}

/** With no user configured, the API is open to read and nobody may act. */
const ANONYMOUS = { user: "anonymous", role: "viewer" } as const

/**
 * The user whose token the request carries as `Authorization: Bearer {token}`. Every user's
 * digest is compared, in constant time, so neither a token's length nor its prefix nor which
 * user matched leaks through timing.
 */
const callerOf = (authorization: string | undefined, users: ReadonlyArray<HttpUser>): HttpUser | undefined => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")
  const given = createHash("sha256").update(match?.[1] ?? "").digest()
  let found: HttpUser | undefined
  for (const user of users) {
    if (timingSafeEqual(given, Buffer.from(Redacted.value(user.digest), "hex")) && match !== null) found ??= user
  }
  return found
}

/**
 * Wraps a route's handler: with users configured, a request without a known token gets 401 and
 * the handler does not run; otherwise the handler runs with its `HttpCaller`.
 */
export const requireToken = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.gen(function* () {
    const { users } = yield* HttpContext
    const request = yield* HttpServerRequest.HttpServerRequest
    const from = Option.getOrUndefined(request.remoteAddress)
    if (users.length === 0) return yield* Effect.provideService(handler, HttpCaller, { ...ANONYMOUS, from })
    const user = callerOf(request.headers["authorization"], users)
    if (user === undefined) {
      return yield* errorReply(401, "unauthorized", "this path needs Authorization: Bearer {token} (HTTP_TOKEN, HTTP_OPERATOR_TOKEN or a token file's)", {
        "www-authenticate": 'Bearer realm="island"'
      })
    }
    return yield* Effect.provideService(handler, HttpCaller, { user: user.name, role: user.role, from })
  })

/** A `GET` route whose handler runs behind `requireToken`. */
export const tokenRoute = <E, R>(path: HttpRouter.PathInput, handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  HttpRouter.route("GET", path, requireToken(handler))
