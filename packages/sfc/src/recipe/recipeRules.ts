import { Result } from "effect"
import { isCounterName, maxCounterNameLength } from "../condition/conditionCounters.js"
import { parseCondition } from "../condition/parseCondition.js"
import { conditionNames } from "./conditionNames.js"
import { conditionsNeedV1_1 } from "./conditionVersion.js"
import { type Path, problem, quote, type RecipeCheck, transitionLabel } from "./recipeCheck.js"
import { correlationChecks } from "./correlationRules.js"
import { reachableSteps } from "./reachability.js"
import { countersOfCondition } from "./recipeCounters.js"
import { failureFieldsNeedV1_1, onErrorTargets, retryPolicies } from "./failureRules.js"
import { timeLimitsNeedV11, timeLimitTargets } from "./timeLimitRules.js"
import { qualifierFieldRules, supportedQualifiers } from "./qualifierRules.js"
import { subRecipeChecks } from "./subRecipeRules.js"

export type { RecipeCheck } from "./recipeCheck.js"

/** Names share one namespace: transitions and paths refer to steps and branches by name alone. */
export const uniqueNames: RecipeCheck = (recipe) => {
  const named = [
    ...recipe.Steps.map((s, i) => ({ label: `step Steps[${i}]`, name: s.Name, path: ["Steps", i, "Name"] as Path })),
    ...(recipe.Branches ?? []).map((b, i) => ({ label: `branch Branches[${i}]`, name: b.Name, path: ["Branches", i, "Name"] as Path })),
    ...recipe.Actions.map((a, i) => ({ label: `action Actions[${i}]`, name: a.Name, path: ["Actions", i, "Name"] as Path }))
  ]
  const byName = new Map<string, Array<(typeof named)[number]>>()
  for (const element of named) byName.set(element.name, [...(byName.get(element.name) ?? []), element])
  return [...byName].flatMap(([name, users]) =>
    users.length < 2
      ? []
      : [
          problem(
            "duplicate-name",
            users[1]!.path,
            `name ${quote(name)} is used ${users.length} times: by ${users.map((u) => u.label).join(", ")}`
          )
        ]
  )
}

export const oneInitialStep: RecipeCheck = (recipe) => {
  const initial = recipe.Steps.flatMap((step, index) => (step.Initial ? [{ step, index }] : []))
  if (initial.length === 1) return []
  if (initial.length === 0) return [problem("initial-step", ["Steps"], "no step is initial; exactly one step needs Initial: true")]
  const names = initial.map(({ step }) => quote(step.Name)).join(", ")
  return [problem("initial-step", ["Steps", initial[1]!.index, "Initial"], `steps ${names} are all initial; exactly one may be`)]
}

export const referencesExist: RecipeCheck = (recipe) => {
  const steps = new Set(recipe.Steps.map((s) => s.Name))
  const branches = new Set((recipe.Branches ?? []).map((b) => b.Name))
  const ends = recipe.Transitions.flatMap((t, i) =>
    (["Source", "Target"] as const).flatMap((end) =>
      steps.has(t[end]) || branches.has(t[end])
        ? []
        : [
            problem(
              "unknown-reference",
              ["Transitions", i, end],
              `${transitionLabel(t, i)}: ${end.toLowerCase()} ${quote(t[end])} is neither a step nor a branch`
            )
          ]
    )
  )
  const actionSteps = recipe.Actions.flatMap((a, i) => {
    if (steps.has(a.Step)) return []
    const why = branches.has(a.Step) ? `${quote(a.Step)} is a branch; actions belong to steps` : `step ${quote(a.Step)} does not exist`
    return [problem("unknown-reference", ["Actions", i, "Step"], `action ${quote(a.Name)}: ${why}`)]
  })
  return [...ends, ...actionSteps]
}

/** Paths hold steps only, at least one each, and a step belongs to at most one path anywhere. */
export const branchPaths: RecipeCheck = (recipe) => {
  const steps = new Set(recipe.Steps.map((s) => s.Name))
  const branches = new Set((recipe.Branches ?? []).map((b) => b.Name))
  const placed = new Map<string, string>()
  return (recipe.Branches ?? []).flatMap((branch, b) => {
    const at = (...rest: Path): Path => ["Branches", b, "Branches", ...rest]
    const label = `branch ${quote(branch.Name)}`
    if (branch.Branches.length === 0) return [problem("branch-path", at(), `${label} has no paths`)]
    return branch.Branches.flatMap((path, p) => {
      if (path.length === 0) return [problem("branch-path", at(p), `${label}: path ${p} is empty`)]
      return path.flatMap((step, s) => {
        const where = `${label} path ${p}`
        if (!steps.has(step)) {
          const what = branches.has(step) ? `branch ${quote(step)}; paths hold steps only` : `${quote(step)}, which is not a step`
          return [problem("branch-path", at(p, s), `${where} lists ${what}`)]
        }
        const earlier = placed.get(step)
        if (earlier !== undefined) return [problem("branch-path", at(p, s), `step ${quote(step)} is in two paths: ${earlier} and ${where}`)]
        placed.set(step, where)
        return []
      })
    })
  })
}

/**
 * Steps on a branch path advance in the path's list order, so a transition out of such a step,
 * or into any but the first step of a path, would never be taken: refuse it instead of
 * accepting a recipe whose author expects something else.
 */
export const pathTransitions: RecipeCheck = (recipe) => {
  const steps = new Set(recipe.Steps.map((s) => s.Name))
  const inPath = new Map<string, { branch: string; first: boolean }>()
  for (const branch of recipe.Branches ?? []) {
    for (const path of branch.Branches) {
      // Paths that list non-steps are reported by branchPaths; only real steps matter here.
      path.forEach((step, i) => steps.has(step) && inPath.set(step, { branch: branch.Name, first: i === 0 }))
    }
  }
  return recipe.Transitions.flatMap((t, i) => {
    const source = inPath.get(t.Source)
    if (source) {
      return [problem("branch-path", ["Transitions", i, "Source"], `${transitionLabel(t, i)} leaves ${quote(t.Source)}, a step of branch ${quote(source.branch)}; path steps advance in list order and the branch is left by transitions from ${quote(source.branch)}`)]
    }
    const target = inPath.get(t.Target)
    if (target && !(target.first && t.Source === target.branch)) {
      return [problem("branch-path", ["Transitions", i, "Target"], `${transitionLabel(t, i)} enters ${quote(t.Target)}, a step of branch ${quote(target.branch)}; a path is entered through its branch`)]
    }
    return []
  })
}

export const positiveTimeouts: RecipeCheck = (recipe) =>
  recipe.Actions.flatMap((a, i) =>
    Number.isFinite(a.TimeoutSeconds) && a.TimeoutSeconds > 0
      ? []
      : [
          problem(
            "timeout",
            ["Actions", i, "TimeoutSeconds"],
            `action ${quote(a.Name)}: TimeoutSeconds must be greater than 0, not ${a.TimeoutSeconds}`
          )
        ]
  )

export const conditionsParse: RecipeCheck = (recipe) =>
  recipe.Transitions.flatMap((t, i) => {
    const parsed = parseCondition(t.Condition)
    if (Result.isSuccess(parsed)) return []
    const { message, position } = parsed.failure
    return [
      problem(
        "condition",
        ["Transitions", i, "Condition"],
        `${transitionLabel(t, i)}: condition ${quote(t.Condition)} does not parse at position ${position}: ${message}`
      )
    ]
  })

/**
 * `counter.<name>` must name something a journal can define: a letter, then up
 * to 63 letters, digits, `_`, `.` or `-`. And with counters in the conditions, an action called
 * `counter` could never be read as `counter.field`: its author meant one or the other.
 */
export const counterNames: RecipeCheck = (recipe) => {
  const bad = recipe.Transitions.flatMap((t, i) =>
    countersOfCondition(t.Condition)
      .filter((name) => !isCounterName(name))
      .map((name) =>
        problem(
          "counter",
          ["Transitions", i, "Condition"],
          `${transitionLabel(t, i)}: counter.${name} is not a counter name (a letter, then at most ${maxCounterNameLength - 1} letters, digits, '_', '.' or '-')`
        )
      )
  )
  const usesCounters = recipe.Transitions.some((t) => countersOfCondition(t.Condition).length > 0)
  const shadowed = usesCounters
    ? recipe.Actions.flatMap((a, i) =>
        a.Name === "counter"
          ? [problem("counter", ["Actions", i, "Name"], `action "counter": conditions read counter.<name> as a journal counter, so this action's results cannot be read as counter.<field>; rename the action`)]
          : []
      )
    : []
  return [...bad, ...shadowed]
}

/**
 * With several initial steps (already a problem) a step reachable from none of them is still
 * unreachable whichever is meant; with none there is no start, and `oneInitialStep` has spoken.
 */
export const stepsReachable: RecipeCheck = (recipe) => {
  const initial = recipe.Steps.filter((s) => s.Initial).map((s) => s.Name)
  if (initial.length === 0) return []
  const reached = reachableSteps(recipe, initial)
  const from = initial.length === 1 ? `the initial step ${quote(initial[0]!)}` : `any of the initial steps ${initial.map(quote).join(", ")}`
  return recipe.Steps.flatMap((s, i) =>
    reached.has(s.Name) ? [] : [problem("unreachable", ["Steps", i], `step ${quote(s.Name)} is not reachable from ${from}`)]
  )
}

/** The rules that judge each transition or action on its own, so they also run on the parts of a malformed recipe. */
export const elementChecks: ReadonlyArray<RecipeCheck> = [
  positiveTimeouts,
  conditionsParse,
  counterNames,
  supportedQualifiers,
  qualifierFieldRules,
  failureFieldsNeedV1_1,
  retryPolicies,
  ...correlationChecks,
  ...subRecipeChecks
]

/** Every rule of a sound recipe: the structure, then each element's (as above), then the rules across elements. */
export const recipeChecks: ReadonlyArray<RecipeCheck> = [
  uniqueNames,
  oneInitialStep,
  referencesExist,
  branchPaths,
  pathTransitions,
  ...elementChecks,
  onErrorTargets,
  timeLimitTargets,
  stepsReachable,
  timeLimitsNeedV11,
  conditionsNeedV1_1,
  conditionNames
]
