import type { HistoryPoint } from "../src/HistoryPoint.js"
import { api } from "./api.js"
import { lineChart } from "./chart.js"
import { h, replace, section } from "./dom.js"
import { coalesce } from "./live.js"

/** What `GET /api/console/history` answers. */
interface HistoryAnswer {
  readonly source: "daemon" | "prometheus"
  readonly stepMs: number
  readonly points: ReadonlyArray<HistoryPoint>
}

/** The step each window is drawn in: about 60 to 100 points a chart. */
const STEP_OF: Readonly<Record<string, string>> = { "24h": "15m", "6h": "5m", "1h": "1m" }
/** The live feed's events come often; the history is read again at most this often. */
const REFRESH_MS = 5_000

const SOURCE_TEXT = {
  daemon: "From this daemon's memory: what it has seen since it started, and what the change streams still held then (about the last 5 000 changes of each scope). Older history is in Prometheus.",
  prometheus: "From the Prometheus server that scrapes the daemons."
}

const select = (id: string, values: ReadonlyArray<readonly [string, string]>, value: string) => {
  const element = h("select", { id }, values.map(([v, text]) => h("option", { value: v }, text))) as HTMLSelectElement
  element.value = value
  return element
}

const charts = (answer: HistoryAnswer) => {
  const times = answer.points.map((p) => p.at)
  const rates = lineChart({
    id: "chart-rates",
    title: "Jobs per minute",
    unit: "jobs/min",
    times,
    stepMs: answer.stepMs,
    series: (["started", "completed", "aborted"] as const).map((k) => ({ name: k, cls: `c-${k}`, values: answer.points.map((p) => p[k]) }))
  })
  const runTimes = lineChart({
    id: "chart-run-times",
    title: "Run time of completed jobs",
    unit: "ms",
    times,
    stepMs: answer.stepMs,
    series: (["p50", "p95", "p99"] as const).map((k) => ({ name: k, cls: `c-${k}`, values: answer.points.map((p) => p[k]) }))
  })
  return [rates, runTimes]
}

/**
 * The history section of the island page (the whole island or a scope picked) and of a scope
 * page (`scope` fixed): jobs per minute and run-time percentiles over a window picked (24 h, 6 h,
 * 1 h). `refresh` (called on the live feed's events) reads it again, at most every 5 s.
 */
export const historyPanel = (scope?: string) => {
  const state = { window: "24h", scope: scope ?? "" }
  const area = h("div", { class: "charts", id: "history-charts" })
  const note = h("p", { class: "meta", id: "history-source" })
  const windows = select("history-window", Object.keys(STEP_OF).map((w) => [w, `last ${w}`] as const), state.window)
  const scopes = select("history-scope", [["", "whole island"]], state.scope)
  const render = async () => {
    const q = new URLSearchParams({ window: state.window, step: STEP_OF[state.window]! })
    if (state.scope !== "") q.set("scope", state.scope)
    try {
      const answer = await api<HistoryAnswer>(`/api/console/history?${q.toString()}`)
      replace(area, charts(answer))
      replace(note, SOURCE_TEXT[answer.source])
    } catch (error) {
      replace(area, h("p", { class: "problem" }, String(error)))
    }
  }
  const refresh = coalesce(render, REFRESH_MS)
  windows.onchange = () => void ((state.window = windows.value), render())
  scopes.onchange = () => void ((state.scope = scopes.value), render())
  const controls = h("div", { class: "history-controls" }, h("label", {}, "window ", windows), scope === undefined ? h("label", {}, "scope ", scopes) : null)
  /** The island page's scopes to pick from (the one picked stays). */
  const setScopes = (names: ReadonlyArray<string>) => {
    const wanted = ["", ...names].join("\n")
    if ([...scopes.options].map((o) => o.value).join("\n") === wanted) return
    replace(scopes, h("option", { value: "" }, "whole island"), names.map((n) => h("option", { value: n }, n)))
    if (!names.includes(state.scope)) state.scope = ""
    scopes.value = state.scope
  }
  return { element: section("Jobs over the last hours", controls, area, note), refresh, setScopes }
}
