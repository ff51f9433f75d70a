import { HttpRouter } from "effect/http"
import { Effect } from "effect"
import { HttpContext } from "./HttpContext.js"
import { jsonReply } from "./HttpReply.js"

/**
 * The probes, open without a token: `/healthz` answers while the process runs, `/readyz` 200
 * only when every readiness check of the running island passes (503 while it starts or stops).
 */
/** The one problem while no island runs: before its servers answer, or once it shuts down. */
const STARTING = "the island is not running: it waits for its servers, or it shuts down"

export const healthRoutes = [
  HttpRouter.route("GET", "/healthz", jsonReply(200, { status: "alive" })),
  HttpRouter.route(
    "GET",
    "/readyz",
    Effect.gen(function* () {
      const island = (yield* HttpContext).island()
      if (island === undefined) return yield* jsonReply(503, { ready: false, checks: { started: false }, problems: [STARTING] })
      const report = yield* island.readiness
      const ready = Object.values(report.checks).every(Boolean)
      return yield* jsonReply(ready ? 200 : 503, { ready, ...report })
    })
  )
] as const
