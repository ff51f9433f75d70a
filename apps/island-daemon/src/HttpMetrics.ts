import { HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { tokenRoute } from "./HttpAccess.js"
import { HttpContext } from "./HttpContext.js"

/**
 * `/metrics`: the Prometheus text (prom-client's content type), behind the token when one is set,
 * with the readiness checks of `/readyz` as `microdcs_ready{check}` (checked again at most every 5 s).
 */
export const metricsRoutes = [
  tokenRoute(
    "/metrics",
    Effect.gen(function* () {
      const { metrics, island } = yield* HttpContext
      const running = island()
      if (metrics.readinessDue()) metrics.recordReadiness(running === undefined ? { started: false } : (yield* running.readiness).checks)
      const text = yield* Effect.promise(() => metrics.scrape())
      return HttpServerResponse.text(text, { contentType: metrics.contentType })
    })
  )
] as const
