// Types only, no imports: the browser bundle (console/graph.ts) reads the same shape the server lays out.

/**
 * A recipe drawn as a graph (the console's job and configuration pages): steps, branches as boxes
 * around their paths (simultaneous or selection), transitions with their conditions. The layout
 * is computed here, on the server, with elkjs, once per recipe digest: every viewer of every job
 * of one recipe gets the same cached coordinates, and the page stays small (no layout library in
 * the browser). Coordinates are absolute, in SVG user units.
 */
export interface RecipeGraph {
  readonly digest: string
  readonly width: number
  readonly height: number
  readonly nodes: ReadonlyArray<GraphNode>
  readonly edges: ReadonlyArray<GraphEdge>
}

export interface GraphNode {
  /** The step's or the branch's name (unique in a recipe). */
  readonly id: string
  readonly kind: "step" | "branch"
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
  readonly initial: boolean
  /** Branches: `simultaneous` or `selection`. */
  readonly branchType?: string
  /** Steps: the names of their actions. */
  readonly actions: ReadonlyArray<string>
}

export interface GraphEdge {
  readonly id: string
  readonly source: string
  readonly target: string
  /** Empty for a path's own sequence inside a branch. */
  readonly condition: string
  readonly points: ReadonlyArray<readonly [number, number]>
  readonly label?: { readonly x: number; readonly y: number }
}
