import { Effect } from "effect"
import { HistorySource } from "./HistorySource.js"
import { badRequestListing, ok, query } from "./HttpConsoleReply.js"

/** The windows and steps the history answers for (a step divides every window). */
export const HISTORY_WINDOWS: Readonly<Record<string, number>> = { "24h": 24 * 3_600_000, "6h": 6 * 3_600_000, "1h": 3_600_000 }
export const HISTORY_STEPS: Readonly<Record<string, number>> = { "1m": 60_000, "5m": 5 * 60_000, "15m": 15 * 60_000 }

const SCOPE_SHAPE = /^[^\s\u0000-\u001f]{1,256}$/u

/** Every problem of the query, and the query when there is none. */
export const historyQueryOf = (q: URLSearchParams) => {
  const problems: Array<string> = []
  const window = q.get("window") ?? "24h"
  const step = q.get("step") ?? "5m"
  const scopeText = q.get("scope")
  if (!(window in HISTORY_WINDOWS)) problems.push(`window must be one of ${Object.keys(HISTORY_WINDOWS).join(", ")}, got ${JSON.stringify(window)}`)
  if (!(step in HISTORY_STEPS)) problems.push(`step must be one of ${Object.keys(HISTORY_STEPS).join(", ")}, got ${JSON.stringify(step)}`)
  if (scopeText !== null && scopeText !== "" && !SCOPE_SHAPE.test(scopeText)) problems.push("scope must be 1 to 256 characters without spaces or control characters")
  for (const name of q.keys()) if (!["window", "step", "scope"].includes(name)) problems.push(`${name} is not a parameter (scope, window, step)`)
  const scope = scopeText === null || scopeText === "" ? undefined : scopeText
  return { problems, window, step, scope }
}

/**
 * `GET /api/console/history?scope=&window=24h|6h|1h&step=1m|5m|15m`: jobs started, completed and
 * aborted per minute and the run-time p50/p95/p99 (ms, null without completed jobs) of each
 * step, for one scope or the whole island (no scope). 400 lists every problem of the query.
 */
export const consoleHistory = Effect.gen(function* () {
  const parsed = historyQueryOf(yield* query)
  if (parsed.problems.length > 0) return badRequestListing(parsed.problems)
  const source = yield* HistorySource
  const answer = yield* Effect.result(source.points({ scope: parsed.scope, windowMs: HISTORY_WINDOWS[parsed.window]!, stepMs: HISTORY_STEPS[parsed.step]! }))
  // Prometheus away is not the store away: say which.
  if (answer._tag === "Failure") return { status: 503, body: { error: "history-unavailable", message: answer.failure.message } }
  return ok({ scope: parsed.scope ?? null, window: parsed.window, step: parsed.step, ...answer.success })
})
