import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { Effect, Runtime } from "effect"
import type { JobOrderDao, JobResponseDao, ScopeRegistry, SfcStateDao } from "@microdcs/store"
import { routeApi } from "./Api.js"
import type { Metrics } from "./Metrics.js"

/** What `/readyz` reports: each check by name, ready only when all pass. */
export type Readiness = Effect.Effect<Readonly<Record<string, boolean>>>

const send = (res: ServerResponse, status: number, body: unknown, contentType = "application/json") => {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  res.writeHead(status, { "content-type": contentType, "cache-control": "no-store" })
  res.end(text)
}

/**
 * The daemon's HTTP server: `/healthz` (the process is alive), `/readyz` (Valkey reachable, MQTT
 * connected and subscribed, roles running), `/metrics` (Prometheus text) and the read-only JSON
 * API under `/api/`. Started in the current scope and closed with it.
 */
export const serveHttp = (options: { readonly host: string; readonly port: number; readonly metrics: Metrics; readonly readiness: Readiness }) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<JobOrderDao | JobResponseDao | ScopeRegistry | SfcStateDao>()
    const run = Runtime.runPromise(runtime)
    const handle = async (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? "/", "http://localhost")
      if (req.method !== "GET") return send(res, 405, { error: "method-not-allowed" })
      if (url.pathname === "/healthz") return send(res, 200, { status: "alive" })
      if (url.pathname === "/readyz") {
        const checks = await run(options.readiness)
        const ready = Object.values(checks).every(Boolean)
        return send(res, ready ? 200 : 503, { ready, checks })
      }
      if (url.pathname === "/metrics") return send(res, 200, await options.metrics.scrape(), options.metrics.contentType)
      if (url.pathname.startsWith("/api/")) {
        const path = url.pathname.slice(5).split("/").filter((p) => p.length > 0).map(decodeURIComponent)
        const reply = await run(routeApi(path, url.searchParams))
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
