import { HttpRouter, HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { consoleAssets } from "./ConsoleAssets.js"
import { errorReply } from "./HttpReply.js"

/**
 * The page every console path answers with: static markup that loads the script, which reads
 * the path and draws the page from the JSON API. No data is ever put into this markup, so an id
 * or a recipe name from outside can only reach the page as text (the script uses `textContent`).
 */
const shell = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Island console</title>
<link rel="stylesheet" href="/console/app.css">
<script src="/console/app.js" defer></script>
</head>
<body>
<noscript>The island console needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`

/** Everything the page loads comes from the daemon; scripts and styles only from files, never inline. */
const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const page = Effect.succeed(
  HttpServerResponse.text(shell, { contentType: "text/html; charset=utf-8", headers: { "content-security-policy": contentSecurityPolicy } })
)

const asset = (pick: "script" | "stylesheet", contentType: string) =>
  consoleAssets.pipe(
    Effect.map((assets) => HttpServerResponse.text(assets[pick], { contentType })),
    Effect.catchTag("ConsoleAssetsUnavailable", (e) => errorReply(503, "console-not-built", e.message))
  )

/**
 * The console's pages and files, open without the token like the probes: they
 * hold no data; what they show comes from `/api/`, which asks for the token when one is set.
 *
 *   GET /                          the island
 *   GET /console                   the island
 *   GET /console/scopes/{scope}    a scope's job orders
 *   GET /console/jobs/{id}         a job: order, history, response, recipe graph, log tree
 *   GET /console/config            work masters, reference lists, acceptance limits
 *   GET /console/streams           streams, groups, pending, dead letters
 *   GET /console/incidents         what needs attention, newest first
 *   GET /console/search            job order search across scopes
 *   GET /console/app.js, /console/app.css
 */
export const consoleRoutes = [
  HttpRouter.route("GET", "/", page),
  HttpRouter.route("GET", "/console", page),
  HttpRouter.route("GET", "/console/scopes/:scope", page),
  HttpRouter.route("GET", "/console/jobs/:id", page),
  HttpRouter.route("GET", "/console/config", page),
  HttpRouter.route("GET", "/console/streams", page),
  HttpRouter.route("GET", "/console/incidents", page),
  HttpRouter.route("GET", "/console/search", page),
  HttpRouter.route("GET", "/console/app.js", asset("script", "text/javascript; charset=utf-8")),
  HttpRouter.route("GET", "/console/app.css", asset("stylesheet", "text/css; charset=utf-8"))
] as const
