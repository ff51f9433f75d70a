import type { RecipeGraph } from "../src/ConsoleGraphShape.js"
import { h, s } from "./dom.js"

/** The server's layout of a recipe (`src/ConsoleGraph.ts`), one shape for both sides. */
export type { RecipeGraph } from "../src/ConsoleGraphShape.js"

/** What lights the graph of a running job. */
export interface LiveState {
  readonly active: ReadonlyArray<{ readonly step: string }>
  readonly visits: Readonly<Record<string, number>>
  readonly actions: ReadonlyArray<{ readonly action: string; readonly step: string; readonly state: string }>
  readonly activeBranches: ReadonlyArray<string>
}

type GraphNode = RecipeGraph["nodes"][number]
type GraphEdge = RecipeGraph["edges"][number]

const arrowDefs = () =>
  s(
    "defs",
    {},
    s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, s("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }))
  )

/** A branch's frame, with its bars (simultaneous: double, selection: single) above and below its paths. */
const drawBranch = (n: GraphNode, branchesActive: ReadonlySet<string>) => {
  const bar = (y: number) =>
    n.branchType === "simultaneous"
      ? [s("line", { x1: n.x + 6, x2: n.x + n.width - 6, y1: y - 2, y2: y - 2, class: "bar" }), s("line", { x1: n.x + 6, x2: n.x + n.width - 6, y1: y + 2, y2: y + 2, class: "bar" })]
      : [s("line", { x1: n.x + 6, x2: n.x + n.width - 6, y1: y, y2: y, class: "bar" })]
  return s(
    "g",
    { class: `branch ${n.branchType ?? ""}${branchesActive.has(n.id) ? " active" : ""}`, "data-branch": n.id },
    s("rect", { x: n.x, y: n.y, width: n.width, height: n.height, rx: 6 }),
    s("text", { x: n.x + 10, y: n.y + 15, class: "branch-name" }, `${n.id} (${n.branchType ?? "branch"})`),
    bar(n.y + 22),
    bar(n.y + n.height - 6)
  )
}

const drawEdge = (e: GraphEdge) =>
  s(
    "g",
    { class: e.condition === "" ? "edge path" : "edge", "data-source": e.source, "data-target": e.target },
    s("polyline", { points: e.points.map(([x, y]) => `${x},${y}`).join(" "), "marker-end": "url(#arrow)" }),
    e.label && e.condition !== "" ? s("text", { x: e.label.x, y: e.label.y, class: "condition" }, e.condition) : null
  )

/** What lights the steps: the active ones, each action's state, each step's visits. */
interface StepLights {
  readonly active: ReadonlySet<string>
  readonly actionState: ReadonlyMap<string, string>
  readonly visits: Readonly<Record<string, number>> | undefined
}

const drawStep = (n: GraphNode, lights: StepLights) => {
  const visits = lights.visits?.[n.id] ?? 0
  const classes = ["step", n.initial ? "initial" : "", lights.active.has(n.id) ? "active" : "", visits > 0 && !lights.active.has(n.id) ? "visited" : ""].filter(Boolean).join(" ")
  const actionText = n.actions.map((a) => (lights.actionState.has(a) ? `${a}: ${lights.actionState.get(a)}` : a)).join(", ")
  return s(
    "g",
    { class: classes, "data-step": n.id },
    s("rect", { x: n.x, y: n.y, width: n.width, height: n.height, rx: 4 }),
    n.initial ? s("rect", { x: n.x + 3, y: n.y + 3, width: n.width - 6, height: n.height - 6, rx: 3, class: "inner" }) : null,
    s("text", { x: n.x + n.width / 2, y: n.y + 19, class: "step-name" }, n.id),
    actionText === "" ? null : s("text", { x: n.x + n.width / 2, y: n.y + 36, class: "step-actions" }, actionText),
    visits > 1
      ? s("g", { class: "visits", "data-visits": visits }, s("circle", { cx: n.x + n.width, cy: n.y, r: 11 }), s("text", { x: n.x + n.width, y: n.y + 4 }, `×${visits}`))
      : null
  )
}

/**
 * The recipe as an SVG: steps as boxes (the initial one with a double frame, the active ones
 * lit, a visit count on a step entered more than once, each action with its state), branches as
 * frames around their paths (simultaneous: double bars, selection: single bars), transitions as
 * arrows with their conditions. Texts are SVG text nodes.
 */
export const drawGraph = (graph: RecipeGraph, live?: LiveState): Element => {
  const lights: StepLights = {
    active: new Set(live?.active.map((a) => a.step) ?? []),
    actionState: new Map((live?.actions ?? []).map((a) => [a.action, a.state])),
    visits: live?.visits
  }
  const branchesActive = new Set(live?.activeBranches ?? [])
  const defs = arrowDefs()
  const branches = graph.nodes.filter((n) => n.kind === "branch").map((n) => drawBranch(n, branchesActive))
  const edges = graph.edges.map(drawEdge)
  const steps = graph.nodes.filter((n) => n.kind === "step").map((n) => drawStep(n, lights))
  const svg = s("svg", { class: "recipe-graph", viewBox: `-12 -12 ${graph.width + 24} ${graph.height + 24}`, width: graph.width + 24, height: graph.height + 24, role: "img" }, defs, branches, edges, steps)
  return h("div", { class: "graph", "data-digest": graph.digest }, svg)
}
