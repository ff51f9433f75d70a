import { Effect, Result } from "effect"
import { describe, expect, it } from "vitest"
import { validateWorkMasterRecipe } from "@microdcs/sfc"
import { recipeGraph } from "../src/ConsoleGraph.js"
import { fixture } from "./IslandKit.js"

/** The recipe graph's layout (server side, elkjs): what the pages draw. */
const axle = () => {
  const recipe = validateWorkMasterRecipe(fixture("work-master-axle.json"))
  if (recipe === undefined || Result.isFailure(recipe)) throw new Error("the axle fixture has no valid recipe")
  return recipe.success
}

const inside = (inner: { x: number; y: number; width: number; height: number }, outer: typeof inner) =>
  inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width && inner.y + inner.height <= outer.y + outer.height

describe("the recipe graph", () => {
  it("draws steps, the simultaneous branch around its paths and every transition with its condition", async () => {
    const graph = await Effect.runPromise(recipeGraph("axle-test", axle()))
    const node = (id: string) => graph.nodes.find((n) => n.id === id)!
    expect(graph.nodes.map((n) => n.id).sort()).toEqual(["Complete", "FitAndQa", "Init", "Positioning", "QaCheck", "TightenBolts", "TightenBolts_Rework", "VerifyTorque"])
    expect(node("Init").initial).toBe(true)
    expect(node("FitAndQa")).toMatchObject({ kind: "branch", branchType: "simultaneous" })
    for (const step of ["Positioning", "TightenBolts", "QaCheck"]) expect(inside(node(step), node("FitAndQa")), step).toBe(true)
    // The path's own order: Positioning above TightenBolts; the two paths side by side.
    expect(node("Positioning").y).toBeLessThan(node("TightenBolts").y)
    expect(node("QaCheck").y).toBe(node("Positioning").y)
    expect(node("VerifyTorque").actions).toEqual(["verify"])
    const conditions = graph.edges.filter((e) => e.condition !== "").map((e) => `${e.source}->${e.target}: ${e.condition}`)
    expect(conditions.sort()).toEqual(["FitAndQa->VerifyTorque: true", "Init->FitAndQa: true", "TightenBolts_Rework->VerifyTorque: true", "VerifyTorque->Complete: torque_ok", "VerifyTorque->TightenBolts_Rework: !torque_ok"])
    for (const edge of graph.edges) expect(edge.points.length, edge.id).toBeGreaterThanOrEqual(2)
    for (const n of graph.nodes) expect(n.x + n.width <= graph.width && n.y + n.height <= graph.height, n.id).toBe(true)
  })

  it("is laid out once per digest: a second viewer gets the cached layout", async () => {
    const first = await Effect.runPromise(recipeGraph("axle-cached", axle()))
    const second = await Effect.runPromise(recipeGraph("axle-cached", axle()))
    expect(second).toBe(first)
  })

  it("draws a selection branch as such", async () => {
    const recipe = {
      ...axle(),
      Branches: [{ Name: "Choose", Type: "selection" as const, Branches: [["Positioning"], ["QaCheck"]] }]
    }
    const graph = await Effect.runPromise(recipeGraph("selection-test", recipe))
    expect(graph.nodes.find((n) => n.id === "Choose")).toMatchObject({ kind: "branch", branchType: "selection" })
  })
})
