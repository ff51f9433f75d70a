import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { Effect } from "effect"
import type { ApiReply } from "./Api.js"
import type { Metrics } from "./Metrics.js"

/**
 * What needs the island up (the store, the MQTT connection): absent while it is starting or
 * stopping, and then `/readyz` answers 503 and the API 503.
 */
export interface IslandEndpoints {
  /** Each readiness check by name; ready only when all pass. */
  readonly readiness: () => Promise<Readonly<Record<string, boolean>>>
  readonly api: (path: ReadonlyArray<string>, query: URLSearchParams) => Promise<ApiReply>
}

const send = (res: ServerResponse, status: number, body: unknown, contentType = "application/json") => {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  res.writeHead(status, { "content-type": contentType, "cache-control": "no-store" })
  res.end(text)
}

/**
 * The daemon's HTTP server: `/healthz` (the process is alive), `/readyz` (Valkey reachable, MQTT
 * connected and subscribed, roles running), `/metrics` (Prometheus text) and the read-only JSON
 * API under `/api/`. Started before the island connects, so `/healthz` answers at once while
 * `/readyz` says why the island is not ready yet; closed with the current scope.
 */
export const serveHttp = (options: {
  readonly host: string
  readonly port: number
  readonly metrics: Metrics
  readonly endpoints: () => IslandEndpoints | undefined
}) =>
  Effect.gen(function* () {
    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? "/", "http://localhost")
      if (req.method !== "GET") return send(res, 405, { error: "method-not-allowed" })
      if (url.pathname === "/healthz") return send(res, 200, { status: "alive" })
      if (url.pathname === "/metrics") return send(res, 200, await options.metrics.scrape(), options.metrics.contentType)
      const island = options.endpoints()
      if (url.pathname === "/readyz") {
        const checks = island ? await island.readiness() : { started: false }
        const ready = Object.values(checks).every(Boolean)
        return send(res, ready ? 200 : 503, { ready, checks })
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
