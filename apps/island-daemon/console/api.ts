/**
 * The JSON API the pages read and act through, with the island's token when one was given
 * (`#token=...` once in the address, taken out of it at once: kept for the browser tab only, in
 * sessionStorage, never in a URL again).
 */

const TOKEN_KEY = "island-console-token"

const fragmentToken = /^#token=(.+)$/.exec(location.hash)
if (fragmentToken) {
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(fragmentToken[1]!))
  history.replaceState(null, "", location.pathname + location.search)
}

export const authHeaders = (): Record<string, string> => {
  const token = sessionStorage.getItem(TOKEN_KEY)
  return token === null ? {} : { authorization: `Bearer ${token}` }
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message)
  }
}

/** GETs `path`; a non-2xx answer is an `ApiError` with the server's message. */
export const api = async <A>(path: string): Promise<A> => answer<A>(await fetch(path, { headers: authHeaders() }))

/**
 * POSTs `body` as JSON to an action route, with the token; a refusal (403, 409, ...) is an
 * `ApiError` with the server's message, which the page shows as it is.
 */
export const post = async <A>(path: string, body: Readonly<Record<string, unknown>>): Promise<A> =>
  answer<A>(await fetch(path, { method: "POST", headers: { ...authHeaders(), "content-type": "application/json" }, body: JSON.stringify(body) }))

const answer = async <A>(response: Response): Promise<A> => {
  const text = await response.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  if (!response.ok) {
    const message = (body as { message?: string; error?: string } | undefined)?.message ?? (body as { error?: string } | undefined)?.error ?? text
    throw new ApiError(response.status, `${response.status}: ${message}`)
  }
  return body as A
}
