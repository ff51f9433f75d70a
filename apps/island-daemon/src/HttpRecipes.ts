import { HttpServerRequest } from "effect/http"
import { Effect } from "effect"
import { recipeCatalogue } from "@microdcs/job-control"
import { tokenRoute } from "./HttpAccess.js"
import { logReply } from "./HttpExecutions.js"
import { RecipePinning } from "./RecipePinning.js"

const catalogue = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const scope = new URL(request.url, "http://localhost").searchParams.get("scope") ?? undefined
  const pins = yield* RecipePinning
  const items = yield* recipeCatalogue({ scope, pins })
  return { status: 200, body: { items: items.map((r) => ({ ...r, pinMatches: r.pinnedDigest === null ? null : r.pinnedDigest === r.digest })), next: null } }
})

/**
 * The recipe catalogue: the recipes each scope has (its work masters that
 * carry one) with their SHA-256 digests over canonical JSON, the digest `RECIPE_DIGESTS` pins
 * for each, if any, and whether it matches. Executions record the same digest.
 *
 *   GET /api/recipes?scope=
 */
export const recipeRoutes = [tokenRoute("/api/recipes", logReply(catalogue))] as const
