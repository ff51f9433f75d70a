import { createServer } from "node:http"
import { HttpServer } from "effect/http"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Deferred, Effect, Layer } from "effect"
import { HttpContext, type IslandEndpoints } from "./HttpContext.js"
import type { Metrics } from "./Metrics.js"
import { daemonApp } from "./HttpRoutes.js"
import type { HttpUser } from "./HttpUsers.js"

/** How long requests still running when the server closes may take before their connections are cut. */
const CLOSE_GRACE_MS = 5_000

/**
 * The daemon's HTTP server (`effect/http`'s router on `@effect/platform-node`): `/healthz`
 * (the process is alive), `/readyz` (Valkey reachable, MQTT connected and subscribed, roles
 * running), `/metrics` (Prometheus text), the JSON API under `/api/` and the console's actions (POST, operators only). Started before
 * the island connects, so `/healthz` answers at once while `/readyz` says why the island is not
 * ready yet; closed with the current scope, after the requests in flight have been answered.
 * With users, `/metrics` and the API answer 401 without one's token; the console's actions
 * (POST) need an operator's.
 */
export const serveHttp = (options: {
  readonly host: string
  readonly port: number
  readonly metrics: Metrics
  readonly endpoints: () => IslandEndpoints | undefined
  /** Whose bearer tokens `/metrics` and `/api/*` take (none: open to read, no actions); the probes stay open. */
  readonly users?: ReadonlyArray<HttpUser> | undefined
}) =>
  Effect.gen(function* () {
    const server = createServer()
    const closing = yield* Deferred.make<void>()
    const context = HttpContext.of({ metrics: options.metrics, island: options.endpoints, users: options.users ?? [], closing })
    const built = yield* Layer.build(
      HttpServer.serve(yield* daemonApp).pipe(
        Layer.provide(Layer.succeed(HttpContext, context)),
        Layer.provideMerge(NodeHttpServer.layer(() => server, { host: options.host, port: options.port }))
      )
    )
    // Runs before the server closes (finalizers run in reverse): answers from now on close their
    // connection, and a request still running after the grace has its connection cut.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        yield* Deferred.succeed(closing, undefined)
        const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref()
        server.once("close", () => clearTimeout(cut))
      })
    )
    const bound = Context.get(built, HttpServer.HttpServer).address
    const address = { host: options.host, port: bound._tag === "UnixPathAddress" ? options.port : bound.port }
    yield* Effect.logInfo("http server listening").pipe(Effect.annotateLogs(address))
    return address
  })
