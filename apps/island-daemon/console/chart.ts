import { h, s } from "./dom.js"
import { formatTime, utcText, utcTitle } from "./time.js"

/**
 * A line chart drawn as plain SVG built with the DOM (no chart library, no inline style, no
 * markup from data: it meets the console's content security policy as the recipe graph does).
 * A gap in a series (`null`, no run completed in the step) breaks its line. Hovering a step
 * shows its local time with date and zone, the UTC instant and every series' value.
 */

export interface ChartSeries {
  readonly name: string
  /** Its CSS class (the colour, in app.css). */
  readonly cls: string
  readonly values: ReadonlyArray<number | null>
}

export interface ChartSpec {
  readonly id: string
  readonly title: string
  readonly unit: string
  /** The start of each step, epoch ms. */
  readonly times: ReadonlyArray<number>
  readonly stepMs: number
  readonly series: ReadonlyArray<ChartSeries>
}

const W = 640
const H = 180
const LEFT = 52
const RIGHT = 10
const TOP = 10
const BOTTOM = 24

/** The smallest of 1, 2, 2.5, 5 × 10^n at or above `v` (an axis that ends on a round number). */
const niceMax = (v: number): number => {
  if (!(v > 0)) return 1
  const p = 10 ** Math.floor(Math.log10(v))
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((m) => m >= v)!
}

const valueText = (v: number | null, unit: string) => (v === null ? "none" : `${Number.isInteger(v) ? v : v.toFixed(2)} ${unit}`)

/** The path of one series, a new segment after each gap. */
const linePath = (values: ReadonlyArray<number | null>, x: (i: number) => number, y: (v: number) => number) => {
  let d = ""
  let pen = false
  values.forEach((v, i) => {
    if (v === null) pen = false
    else {
      d += `${pen ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`
      pen = true
    }
  })
  return d
}

/** A dot for each value with no value beside it (a line needs two), so a lone step shows. */
const loneDots = (c: ChartSeries, x: (i: number) => number, y: (v: number) => number) =>
  c.values.map((v, i) => (v !== null && (c.values[i - 1] ?? null) === null && (c.values[i + 1] ?? null) === null ? s("circle", { class: `dot ${c.cls}`, cx: x(i), cy: y(v), r: 2.5 }) : null))

/** A time label of the axis: the local form, UTC on hover. */
const timeLabel = (ms: number, x: number, anchor: string) => s("text", { x, y: H - 6, "text-anchor": anchor, class: "axis" }, s("title", {}, utcTitle(ms)), formatTime(ms))

/** One column per step, transparent, whose title says the step's figures. */
const hoverColumns = (spec: ChartSpec, x: (i: number) => number, width: number) =>
  spec.times.map((t, i) =>
    s(
      "rect",
      { class: "hover", x: x(i) - width / 2, y: TOP, width, height: H - TOP - BOTTOM, "data-at": t },
      s("title", {}, [`${formatTime(t)} (UTC ${utcText(t)}), ${spec.stepMs / 60_000} min`, ...spec.series.map((c) => `${c.name}: ${valueText(c.values[i] ?? null, spec.unit)}`)].join("\n"))
    )
  )

/** The chart with its title and legend; `data-points` counts the values drawn, `data-nonzero` those above 0. */
export const lineChart = (spec: ChartSpec): HTMLElement => {
  const n = spec.times.length
  const all = spec.series.flatMap((c) => c.values.filter((v): v is number => v !== null))
  const top = niceMax(Math.max(0, ...all))
  const step = (W - LEFT - RIGHT) / Math.max(1, n - 1)
  const x = (i: number) => LEFT + i * step
  const y = (v: number) => TOP + (H - TOP - BOTTOM) * (1 - v / top)
  const svg = s(
    "svg",
    { class: "chart", viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", "aria-label": spec.title },
    s("line", { class: "grid", x1: LEFT, x2: W - RIGHT, y1: y(0), y2: y(0) }),
    s("line", { class: "grid", x1: LEFT, x2: W - RIGHT, y1: y(top), y2: y(top) }),
    s("text", { class: "axis", x: LEFT - 4, y: y(top) + 4, "text-anchor": "end" }, String(top)),
    s("text", { class: "axis", x: LEFT - 4, y: y(0), "text-anchor": "end" }, "0"),
    spec.series.map((c) => s("path", { class: `line ${c.cls}`, d: linePath(c.values, x, y), "data-series": c.name })),
    spec.series.map((c) => loneDots(c, x, y)),
    n === 0 ? null : [timeLabel(spec.times[0]!, LEFT, "start"), timeLabel(spec.times[n - 1]!, W - RIGHT, "end")],
    hoverColumns(spec, x, step)
  )
  const legend = h("div", { class: "legend" }, spec.series.map((c) => h("span", { class: `key ${c.cls}` }, c.name)), h("span", { class: "meta" }, ` (${spec.unit})`))
  return h("figure", { class: "chart-box", id: spec.id, "data-points": String(all.length), "data-nonzero": String(all.filter((v) => v > 0).length) }, h("figcaption", {}, spec.title), svg, legend)
}
