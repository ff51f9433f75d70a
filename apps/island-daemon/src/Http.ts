import { createHash, timingSafeEqual } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { Effect, Redacted } from "effect"
import type { ApiReply } from "./Api.js"
import type { Metrics } from "./Metrics.js"
import type { ReadinessReport } from "./Readiness.js"

/**
 * What needs the island up (the store, the MQTT connection): absent while it is starting or
 * stopping, and then `/readyz` answers 503 and the API 503.
 */
export interface IslandEndpoints {
  /** Each readiness check by name, each role's health and the problems; ready only when all checks pass. */
  readonly readiness: () => Promise<ReadinessReport>
  readonly api: (path: ReadonlyArray<string>, query: URLSearchParams) => Promise<ApiReply>
}

const send = (res: ServerResponse, status: number, body: unknown, contentType = "application/json") => {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  res.writeHead(status, { "content-type": contentType, "cache-control": "no-store" })
  res.end(text)
}

const digest = (text: string) => createHash("sha256").update(text).digest()

/**
 * Whether the request carries `Authorization: Bearer {token}`. Compared through digests in
 * constant time, so neither the token's length nor its prefix leaks through timing.
 */
const authorized = (req: IncomingMessage, token: Redacted.Redacted<string> | undefined): boolean => {
  if (token === undefined) return true
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")
  return match !== null && timingSafeEqual(digest(match[1]!), digest(Redacted.value(token)))
}

/**
 * The daemon's HTTP server: `/healthz` (the process is alive), `/readyz` (Valkey reachable, MQTT
 * connected and subscribed, roles running), `/metrics` (Prometheus text) and the read-only JSON
 * API under `/api/`. Started before the island connects, so `/healthz` answers at once while
 * `/readyz` says why the island is not ready yet; closed with the current scope. With a token,
 * `/metrics` and the API answer 401 without it.
 */
export const serveHttp = (options: {
  readonly host: string
  readonly port: number
  readonly metrics: Metrics
  readonly endpoints: () => IslandEndpoints | undefined
  /** Required as a bearer token by `/metrics` and `/api/*`; the probes stay open. */
  readonly token?: Redacted.Redacted<string> | undefined
}) =>
  Effect.gen(function* () {
    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? "/", "http://localhost")
      if (req.method !== "GET") return send(res, 405, { error: "method-not-allowed" })
      if (url.pathname === "/healthz") return send(res, 200, { status: "alive" })
      if ((url.pathname === "/metrics" || url.pathname.startsWith("/api/")) && !authorized(req, options.token)) {
        res.setHeader("www-authenticate", 'Bearer realm="island"')
        return send(res, 401, { error: "unauthorized", message: "this path needs Authorization: Bearer {HTTP_TOKEN}" })
      }
      if (url.pathname === "/metrics") return send(res, 200, await options.metrics.scrape(), options.metrics.contentType)
      const island = options.endpoints()
      if (url.pathname === "/readyz") {
        if (!island) return send(res, 503, { ready: false, checks: { started: false } })
        const report = await island.readiness()
        const ready = Object.values(report.checks).every(Boolean)
        return send(res, ready ? 200 : 503, { ready, ...report })
      }
      if (url.pathname.startsWith("/api/")) {
        if (!island) return send(res, 503, { error: "not-ready", message: "the island is starting or stopping" })
        let path: Array<string>
        try {
          path = url.pathname.slice(5).split("/").filter((p) => p.length > 0).map(decodeURIComponent)
        } catch {
          return send(res, 400, { error: "bad-request", message: "malformed percent-encoding in the path" })
        }
        const reply = await island.api(path, url.searchParams)
        return send(res, reply.status, reply.body)
      }
      return send(res, 404, { error: "not-found" })
    }
    const server = createServer((req, res) => {
      handle(req, res).catch((error: unknown) => send(res, 500, { error: "internal", message: String(error) }))
    })
    const address = yield* Effect.acquireRelease(
      Effect.async<{ host: string; port: number }, Error>((resume) => {
        server.once("error", (error) => resume(Effect.fail(error)))
        server.listen(options.port, options.host, () => {
          const a = server.address()
          resume(Effect.succeed({ host: options.host, port: typeof a === "object" && a ? a.port : options.port }))
        })
      }),
      () =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )
    yield* Effect.logInfo("http server listening").pipe(Effect.annotateLogs(address))
    return address
  })
