import { recipeSchemaVersion } from "./RecipeVersions.js"
import { Result } from "effect"
import { analyzeCondition } from "../condition/parseCondition.js"
import { problem, quote, type RecipeCheck, transitionLabel } from "./recipeCheck.js"

const needs = "needs recipe schema v1.1.0"

/**
 * A v1.0.0 recipe runs as it always did, so it may not use what v1.1.0 added to conditions (step
 * flags, durations, job order fields, arithmetic, quoted names) nor to actions (`Results`): each
 * use is a problem naming the construct. A condition that does not parse is `conditionsParse`'s.
 */
export const conditionsNeedV1_1: RecipeCheck = (recipe) => {
  if (recipeSchemaVersion(recipe) !== "1.0.0") return []
  const steps = recipe.Steps.map((s) => s.Name)
  const inConditions = recipe.Transitions.flatMap((t, i) => {
    const analyzed = analyzeCondition(t.Condition, { steps })
    if (Result.isFailure(analyzed)) return []
    const constructs = new Map(analyzed.success.newSyntax.map((s) => [s.construct, s.position]))
    return [...constructs].map(([construct, position]) =>
      problem("needs-v1.1", ["Transitions", i, "Condition"], `${transitionLabel(t, i)}: ${construct} (at character ${position}) ${needs}`)
    )
  })
  const inActions = recipe.Actions.flatMap((a, i) =>
    a.Results === undefined ? [] : [problem("needs-v1.1", ["Actions", i, "Results"], `action ${quote(a.Name)}: Results ${needs}`)]
  )
  return [...inConditions, ...inActions]
}
