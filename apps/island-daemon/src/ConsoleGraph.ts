import type { ElkExtendedEdge, ElkNode } from "elkjs/lib/elk.bundled.js"
import { Effect } from "effect"
import type { Recipe } from "@microdcs/sfc"
import type { GraphEdge, GraphNode, RecipeGraph } from "./ConsoleGraphShape.js"

export type { GraphEdge, GraphNode, RecipeGraph } from "./ConsoleGraphShape.js"

/** ELK, loaded with the first layout: its bundle takes a few hundred ms to load, which a daemon's start need not wait for. */
let elk: Promise<{ readonly layout: (graph: ElkNode) => Promise<ElkNode> }> | undefined
const layoutEngine = () => (elk ??= import("elkjs/lib/elk.bundled.js").then(({ default: ELK }) => new ELK()))

const CHAR_WIDTH = 7.5
const STEP_HEIGHT = 46

const stepSize = (name: string, actions: ReadonlyArray<string>) => ({
  width: Math.max(110, Math.ceil(Math.max(name.length, actions.join(", ").length * 0.85) * CHAR_WIDTH) + 28),
  height: STEP_HEIGHT
})

const layered = {
  "elk.algorithm": "layered",
  "elk.direction": "DOWN",
  "elk.edgeRouting": "ORTHOGONAL",
  "elk.layered.spacing.nodeNodeBetweenLayers": "38",
  "elk.spacing.nodeNode": "28",
  "elk.spacing.edgeLabel": "4",
  "elk.edgeLabels.inline": "false"
}

/** The ELK graph of a recipe: a branch is a node holding its paths' steps in sequence. */
const elkGraphOf = (recipe: Recipe): ElkNode => {
  const actionsOf = new Map<string, Array<string>>()
  for (const action of recipe.Actions) actionsOf.set(action.Step, [...(actionsOf.get(action.Step) ?? []), action.Name])
  const inBranch = new Map<string, string>()
  for (const branch of (recipe.Branches ?? [])) for (const path of branch.Branches) for (const step of path) inBranch.set(step, branch.Name)
  const stepNode = (name: string): ElkNode => ({ id: name, ...stepSize(name, actionsOf.get(name) ?? []) })
  const branchNodes: Array<ElkNode> = (recipe.Branches ?? []).map((branch) => ({
    id: branch.Name,
    layoutOptions: { ...layered, "elk.separateConnectedComponents": "false", "elk.padding": "[top=32,left=14,bottom=14,right=14]" },
    labels: [{ text: branch.Name, width: branch.Name.length * CHAR_WIDTH, height: 14 }],
    children: branch.Branches.flatMap((path) => path.filter((s) => inBranch.get(s) === branch.Name).map(stepNode)),
    edges: branch.Branches.flatMap((path, p) =>
      path.slice(1).map((step, i): ElkExtendedEdge => ({ id: `path:${branch.Name}:${p}:${i}`, sources: [path[i]!], targets: [step] }))
    )
  }))
  const topSteps = recipe.Steps.filter((s) => !inBranch.has(s.Name)).map((s) => stepNode(s.Name))
  // A transition naming a step inside a branch is drawn to (or from) the branch's box.
  const outer = (name: string) => inBranch.get(name) ?? name
  const known = new Set([...topSteps.map((n) => n.id), ...branchNodes.map((n) => n.id)])
  const edges: Array<ElkExtendedEdge> = recipe.Transitions.flatMap((t, i) => {
    const source = outer(t.Source)
    const target = outer(t.Target)
    if (!known.has(source) || !known.has(target)) return []
    const label = t.Condition === "" ? "true" : t.Condition
    return [{ id: `t:${i}`, sources: [source], targets: [target], labels: [{ text: label, width: label.length * CHAR_WIDTH * 0.9, height: 14 }] }]
  })
  return { id: "root", layoutOptions: { ...layered, "elk.padding": "[top=16,left=16,bottom=16,right=16]" }, children: [...topSteps, ...branchNodes], edges }
}

const flatten = (digest: string, recipe: Recipe, laid: ElkNode): RecipeGraph => {
  const initial = new Set(recipe.Steps.filter((s) => s.Initial).map((s) => s.Name))
  const branchType = new Map((recipe.Branches ?? []).map((b) => [b.Name, b.Type]))
  const actionsOf = new Map<string, Array<string>>()
  for (const action of recipe.Actions) actionsOf.set(action.Step, [...(actionsOf.get(action.Step) ?? []), action.Name])
  const conditionOf = new Map(recipe.Transitions.map((t, i) => [`t:${i}`, t.Condition === "" ? "true" : t.Condition]))
  const nodes: Array<GraphNode> = []
  const edges: Array<GraphEdge> = []
  // ELK gives child coordinates relative to their parent, and an edge's relative to its container.
  const walk = (node: ElkNode, dx: number, dy: number) => {
    for (const child of node.children ?? []) {
      const x = dx + (child.x ?? 0)
      const y = dy + (child.y ?? 0)
      const type = branchType.get(child.id)
      nodes.push({
        id: child.id,
        kind: child.children === undefined ? "step" : "branch",
        x,
        y,
        width: child.width ?? 0,
        height: child.height ?? 0,
        initial: initial.has(child.id),
        ...(type === undefined ? {} : { branchType: type }),
        actions: actionsOf.get(child.id) ?? []
      })
      if (child.children !== undefined) walk(child, x, y)
    }
    for (const edge of node.edges ?? []) {
      const points: Array<readonly [number, number]> = []
      for (const section of edge.sections ?? []) {
        points.push([dx + section.startPoint.x, dy + section.startPoint.y])
        for (const bend of section.bendPoints ?? []) points.push([dx + bend.x, dy + bend.y])
        points.push([dx + section.endPoint.x, dy + section.endPoint.y])
      }
      const label = edge.labels?.[0]
      edges.push({
        id: edge.id,
        source: edge.sources[0]!,
        target: edge.targets[0]!,
        condition: conditionOf.get(edge.id) ?? "",
        points,
        ...(label?.x === undefined || label.y === undefined ? {} : { label: { x: dx + label.x, y: dy + label.y + 11 } })
      })
    }
  }
  walk(laid, 0, 0)
  return { digest, width: Math.ceil(laid.width ?? 0), height: Math.ceil(laid.height ?? 0), nodes, edges }
}

/** Layouts kept per process; a recipe is small, so this bound is about never growing without end. */
const CACHED_LAYOUTS = 500
const cache = new Map<string, Promise<RecipeGraph>>()

/** A layout that could not be computed: the page shows the recipe as a list instead. */
export class GraphLayoutFailed extends Error {
  readonly _tag = "GraphLayoutFailed"
}

/** The graph of the recipe with this digest, laid out on first use and cached by the digest. */
export const recipeGraph = (digest: string, recipe: Recipe): Effect.Effect<RecipeGraph, GraphLayoutFailed> =>
  Effect.tryPromise({
    try: () => {
      const known = cache.get(digest)
      if (known !== undefined) return known
      const laid = layoutEngine().then((engine) => engine.layout(elkGraphOf(recipe))).then((root) => flatten(digest, recipe, root))
      // A failed layout is not kept: the next viewer tries again.
      laid.catch(() => cache.delete(digest))
      if (cache.size >= CACHED_LAYOUTS) cache.delete(cache.keys().next().value!)
      cache.set(digest, laid)
      return laid
    },
    catch: (error) => new GraphLayoutFailed(error instanceof Error ? error.message : String(error))
  })

/** How many layouts were computed and kept (for the first-render bench and the test). */
export const cachedLayouts = () => cache.size
