import { Effect } from "effect"
import type { HistoryPoint, HistoryWindow } from "./JobHistory.js"
import { windowEnding } from "./JobHistory.js"
import { type HistorySource, HistoryUnavailable } from "./HistorySource.js"

/**
 * The console's history from a Prometheus server's `query_range` API over the daemons' own
 * metrics (`microdcs_jobs_total`, `microdcs_job_run_seconds`): `max by (scope)` first, since
 * every daemon of the island counts the same jobs, then summed over the scopes asked for.
 */

const TIMEOUT_MS = 10_000

/** A label value inside double quotes, as PromQL reads it. */
const quoted = (text: string) => `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`

const selector = (matchers: string | undefined, scope: string | undefined, extra: string) =>
  `{${[extra, scope === undefined ? undefined : `scope=${quoted(scope)}`, matchers].filter((m) => m !== undefined && m !== "").join(",")}}`

/** The six queries of one window: three rates per minute, three run-time percentiles in ms. */
export const historyQueries = (matchers: string | undefined, scope: string | undefined, stepMs: number) => {
  const range = `[${stepMs / 1000}s]`
  const rate = (event: string) => `sum(max by (scope) (increase(microdcs_jobs_total${selector(matchers, scope, `event="${event}"`)}${range}))) / ${stepMs / 60_000}`
  const quantile = (q: number) =>
    `histogram_quantile(${q}, sum by (le) (max by (scope, le) (increase(microdcs_job_run_seconds_bucket${selector(matchers, scope, "")}${range})))) * 1000`
  return { started: rate("started"), completed: rate("completed"), aborted: rate("aborted"), p50: quantile(0.5), p95: quantile(0.95), p99: quantile(0.99) }
}

interface RangeAnswer {
  readonly status: string
  readonly error?: string
  readonly data?: { readonly resultType: string; readonly result: ReadonlyArray<{ readonly values: ReadonlyArray<readonly [number, string]> }> }
}

/** One range query: the value at each evaluation time (seconds), by time. */
const rangeQuery = (base: string, query: string, window: HistoryWindow) =>
  Effect.tryPromise({
    try: async (signal) => {
      const params = new URLSearchParams({ query, start: String((window.from + window.stepMs) / 1000), end: String(window.to / 1000), step: `${window.stepMs / 1000}s` })
      const response = await fetch(new URL(`api/v1/query_range?${params.toString()}`, base.endsWith("/") ? base : `${base}/`), { signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]) })
      const body = (await response.json()) as RangeAnswer
      if (!response.ok || body.status !== "success" || body.data?.resultType !== "matrix") throw new Error(body.error ?? `status ${response.status}`)
      const values = new Map<number, number>()
      for (const series of body.data.result) for (const [t, v] of series.values) values.set(Math.round(t * 1000), Number(v))
      return values
    },
    catch: (error) => new HistoryUnavailable({ message: `Prometheus query_range failed: ${error instanceof Error ? error.message : String(error)}` })
  })

/** A number Prometheus gave (NaN for a percentile without runs is none). */
const valueAt = (values: ReadonlyMap<number, number>, t: number, none: number | null): number | null => {
  const v = values.get(t)
  return v === undefined || !Number.isFinite(v) ? none : v
}

/** The history from the Prometheus server at `url` (its base, e.g. `http://prometheus:9090`), with extra label matchers. */
export const prometheusHistory = (url: string, matchers: string | undefined): HistorySource["Service"] => ({
  source: "prometheus",
  points: (query) =>
    Effect.gen(function* () {
      const window = windowEnding(Date.now(), query.windowMs, query.stepMs)
      const queries = historyQueries(matchers, query.scope, query.stepMs)
      const r = yield* Effect.all(Object.fromEntries(Object.entries(queries).map(([k, q]) => [k, rangeQuery(url, q, window)])) as Record<keyof typeof queries, ReturnType<typeof rangeQuery>>, { concurrency: "unbounded" })
      const points: Array<HistoryPoint> = []
      for (let at = window.from; at < window.to; at += window.stepMs) {
        const t = at + window.stepMs
        const ms = (v: number | null) => (v === null ? null : Math.round(v))
        points.push({ at, started: valueAt(r.started, t, 0)!, completed: valueAt(r.completed, t, 0)!, aborted: valueAt(r.aborted, t, 0)!, p50: ms(valueAt(r.p50, t, null)), p95: ms(valueAt(r.p95, t, null)), p99: ms(valueAt(r.p99, t, null)) })
      }
      return { source: "prometheus" as const, ...window, points, scopesLeftOut: [] }
    })
})
