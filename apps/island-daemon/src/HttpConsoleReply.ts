import { HttpRouter, HttpServerRequest } from "effect/http"
import { Effect } from "effect"
import { InvalidInput } from "@microdcs/store"
import { withIsland } from "./HttpContext.js"
import { jsonReply } from "./HttpReply.js"

/** A JSON answer of the console's read routes. */
export interface ConsoleReply {
  readonly status: number
  readonly body: unknown
}

export const ok = (body: unknown): ConsoleReply => ({ status: 200, body })
export const notFound = (what: string): ConsoleReply => ({ status: 404, body: { error: "not-found", message: `${what} does not exist` } })
export const badRequest = (message: string): ConsoleReply => ({ status: 400, body: { error: "bad-request", message } })
/** 400 with every problem of the request: joined in `message`, listed in `problems`. */
export const badRequestListing = (problems: ReadonlyArray<string>): ConsoleReply => ({ status: 400, body: { error: "bad-request", message: problems.join("; "), problems } })

/** The query string, read as the standard URL parser does. */
export const query = Effect.map(HttpServerRequest.HttpServerRequest, (request) => new URL(request.url, "http://localhost").searchParams)

/** A path parameter of the matched route, percent-decoded by the router. */
export const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

/**
 * One console route's answer over the running island (503 while it starts or stops): a refused
 * input is 400 naming the field, any other failure 503 naming its tag.
 */
export const consoleReply = <E extends { readonly _tag: string }, R>(answer: Effect.Effect<ConsoleReply, E, R>) =>
  withIsland(
    answer.pipe(
      Effect.catch((e) =>
        Effect.succeed<ConsoleReply>(
          e instanceof InvalidInput ? badRequest(`${e.field}: ${e.message}`) : { status: 503, body: { error: e._tag, message: "store unavailable" } }
        )
      ),
      Effect.flatMap((reply) => jsonReply(reply.status, reply.body))
    )
  )

/** A page size from `limit` (default 50, 1 to 500), or `undefined` when it is not one. */
export const pageLimit = (q: URLSearchParams, fallback = 50): number | undefined => {
  const text = q.get("limit")
  if (text === null) return fallback
  const n = Number(text)
  return Number.isInteger(n) && n > 0 && n <= 500 ? n : undefined
}

export const LIMIT_PROBLEM = "limit must be an integer from 1 to 500"
