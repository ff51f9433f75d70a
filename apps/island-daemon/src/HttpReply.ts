import { HttpServerResponse } from "effect/http"

/**
 * How the daemon answers: always JSON (`HttpServerResponse.json`, `application/json`), never
 * markup built from data, so an id or a document from outside shows as JSON text.
 */
export const jsonReply = (status: number, body: unknown, headers?: Readonly<Record<string, string>>) =>
  HttpServerResponse.json(body, { status, ...(headers === undefined ? {} : { headers }) })

/** An error answer: `{error, message?}`, `error` a short kebab-case name. */
export const errorReply = (status: number, error: string, message?: string, headers?: Readonly<Record<string, string>>) =>
  jsonReply(status, message === undefined ? { error } : { error, message }, headers)

/**
 * Headers of every answer: nothing is cached (the figures change), and a browser never guesses
 * another content type than the one sent.
 */
export const commonHeaders = { "cache-control": "no-store", "x-content-type-options": "nosniff" } as const
