import { HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { tokenRoute } from "./HttpAccess.js"
import { HttpContext } from "./HttpContext.js"

/** `/metrics`: the Prometheus text (prom-client's content type), behind the token when one is set. */
export const metricsRoutes = [
  tokenRoute(
    "/metrics",
    Effect.gen(function* () {
      const { metrics } = yield* HttpContext
      const text = yield* Effect.promise(() => metrics.scrape())
      return HttpServerResponse.text(text, { contentType: metrics.contentType })
    })
  )
] as const
