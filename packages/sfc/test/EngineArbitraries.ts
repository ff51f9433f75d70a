import { Result } from "effect"
import fc from "fast-check"
import { type EngineInput, type ExecutionState, type Recipe, validateRecipe } from "@microdcs/sfc"
import { JOB, SCOPE } from "./EngineKit.js"

/**
 * Generators for the engine's property tests (not a test file itself): small valid recipes, and
 * abstract inputs that the test resolves against the state at hand (an answer picks one of the
 * actions open at that moment).
 */

// Few types and fields, so actions share types and conditions often read fields results have.
const typeIds = ["t.a", "t.b", "t.c"] as const
export const conditionTexts = ["true", "", "always", "ok", "!ok", "n > 1", "n <= 1", "x == 'a'", "ok || n >= 2", "a0.ok", "!a1.ok", "missing"]

interface ActionSpec {
  readonly interaction: "push_command" | "pull_event"
  readonly qualifier: "N" | "P"
  readonly typeId: string
  readonly timeout: number
}
interface Guard {
  readonly condition: string
  readonly priority: number
}
type NodeSpec =
  | { readonly kind: "step"; readonly actions: ReadonlyArray<ActionSpec> }
  | { readonly kind: "branch"; readonly type: "simultaneous" | "selection"; readonly paths: ReadonlyArray<ReadonlyArray<ReadonlyArray<ActionSpec>>>; readonly into: ReadonlyArray<Guard | null> }
interface EdgeSpec extends Guard {
  readonly from: number
  readonly to: number
}

const guardOf = (texts: ReadonlyArray<string>): fc.Arbitrary<Guard> => fc.record({ condition: fc.constantFrom(...texts), priority: fc.integer({ min: 0, max: 2 }) })
const actionSpec: fc.Arbitrary<ActionSpec> = fc.record({
  interaction: fc.constantFrom("push_command" as const, "pull_event" as const),
  qualifier: fc.constantFrom("N" as const, "N" as const, "N" as const, "P" as const),
  typeId: fc.constantFrom(...typeIds),
  timeout: fc.integer({ min: 1, max: 5 })
})
const stepActions = fc.array(actionSpec, { maxLength: 2 })
const nodeOf = (guard: fc.Arbitrary<Guard>): fc.Arbitrary<NodeSpec> => fc.oneof(
  { weight: 3, arbitrary: stepActions.map((actions) => ({ kind: "step" as const, actions })) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("branch" as const),
      type: fc.constantFrom("simultaneous" as const, "selection" as const),
      paths: fc.array(fc.array(stepActions, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 3 }),
      into: fc.array(fc.option(guard, { freq: 2 }), { minLength: 3, maxLength: 3 })
    })
  }
)

/** Builds the recipe JSON: the nodes in a chain, plus extra edges (skips, loops, exits). */
const build = (nodes: ReadonlyArray<NodeSpec>, chain: ReadonlyArray<Guard>, extra: ReadonlyArray<EdgeSpec>) => {
  let steps = 0
  const Steps: Array<object> = []
  const Actions: Array<object> = []
  const Branches: Array<object> = []
  const Transitions: Array<object> = []
  const addStep = (actions: ReadonlyArray<ActionSpec>): string => {
    const Name = `S${steps++}`
    Steps.push({ Name, Initial: Steps.length === 0 })
    for (const a of actions) {
      const i = Actions.length
      Actions.push({ Name: `a${i}`, Step: Name, Qualifier: a.qualifier, Interaction: a.interaction, TypeId: a.typeId, TimeoutSeconds: a.timeout, Parameters: { i } })
    }
    return Name
  }
  const names = nodes.map((n, i) => {
    if (n.kind === "step") return addStep(n.actions)
    const Name = `B${i}`
    const paths = n.paths.map((path) => path.map(addStep))
    Branches.push({ Name, Type: n.type, Branches: paths })
    if (n.type === "selection") {
      paths.forEach((path, p) => {
        const g = n.into[p]
        if (g) Transitions.push({ Source: Name, Target: path[0], Condition: g.condition, Priority: g.priority })
      })
    }
    return Name
  })
  names.slice(1).forEach((name, i) => Transitions.push({ Source: names[i], Target: name, Condition: chain[i]?.condition ?? "true", Priority: chain[i]?.priority ?? 0 }))
  for (const e of extra) {
    Transitions.push({ Source: names[e.from % names.length], Target: names[e.to % names.length], Condition: e.condition, Priority: e.priority })
  }
  return { Steps, Transitions, Actions, ...(Branches.length > 0 ? { Branches } : {}) }
}

/** The recipe JSON `build` makes: what a `decorate` step may add to before validation. */
export type RecipeJsonSpec = ReturnType<typeof build>

/**
 * Small valid recipes: linear chains with selection and simultaneous branches, loops and skips,
 * their conditions drawn from `texts`; `decorate` may add to each recipe's JSON before it is
 * validated (v1.1.0 fields), and recipes that do not validate are left out.
 */
export const recipesOf = (
  texts: ReadonlyArray<string>,
  decorate: fc.Arbitrary<(json: RecipeJsonSpec) => object> = fc.constant((json: RecipeJsonSpec) => json)
): fc.Arbitrary<Recipe> => {
  const guard = guardOf(texts)
  return fc
    .tuple(
      stepActions.map((actions): NodeSpec => ({ kind: "step", actions })),
      fc.array(nodeOf(guard), { maxLength: 4 }),
      fc.array(guard, { minLength: 4, maxLength: 4 }),
      fc.array(fc.record({ from: fc.nat(), to: fc.nat(), condition: fc.constantFrom(...texts), priority: fc.integer({ min: 0, max: 2 }) }), { maxLength: 3 }),
      decorate
    )
    .map(([first, rest, chain, extra, add]) => validateRecipe(add(build([first, ...rest], chain, extra))))
    .filter(Result.isSuccess)
    .map((valid) => valid.success)
}

/** Small valid v1.0.0 recipes: linear chains with selection and simultaneous branches, loops and skips. */
export const recipe: fc.Arbitrary<Recipe> = recipesOf(conditionTexts)

// Event data arrives as JSON: plain objects (fast-check may build null-prototype ones).
export const resultData = fc
  .oneof(
    { weight: 6, arbitrary: fc.record({ ok: fc.boolean(), n: fc.integer({ min: 0, max: 3 }), x: fc.constantFrom("a", "b") }, { requiredKeys: [] }) },
    { weight: 1, arbitrary: fc.constantFrom(null, 7, "text", [1]) }
  )
  .map((data): unknown => JSON.parse(JSON.stringify(data)))

/** One abstract input; `dt` is how far the clock moves before it (time never goes back). */
export type Op =
  | { readonly kind: "answer"; readonly pick: number; readonly data: unknown; readonly error: boolean; readonly dt: number }
  /** The station answers the open N action with the earliest deadline. */
  | { readonly kind: "prompt"; readonly data: unknown; readonly dt: number }
  | { readonly kind: "stray"; readonly pick: number; readonly dt: number }
  | { readonly kind: "tick"; readonly dt: number; readonly toDue: boolean }
  | { readonly kind: "outage"; readonly length: number }
  /** The outbox handler holds back the latest send of an open command (it found the job paused). */
  | { readonly kind: "hold"; readonly pick: number; readonly dt: number }
  | { readonly kind: "pause" | "resume" | "stop" | "abort"; readonly dt: number }

const dt = fc.integer({ min: 0, max: 8_000 })
export const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ kind: fc.constant("answer" as const), pick: fc.nat(), data: resultData, error: fc.constant(false), dt }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("answer" as const), pick: fc.nat(), data: resultData, error: fc.constant(true), dt }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("stray" as const), pick: fc.nat(), dt }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("tick" as const), dt, toDue: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("outage" as const), length: fc.integer({ min: 0, max: 20_000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("pause" as const), dt }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("hold" as const), pick: fc.nat(), dt }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("resume" as const), dt }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("stop" as const, "abort" as const), dt }) }
)

export interface Clock {
  now: number
}

/** Turns an abstract input into a concrete one for the state at hand (and moves the clock). */
export const resolveOp = (o: Op, state: ExecutionState, due: number | null, pastIds: ReadonlyArray<string>, clock: Clock): EngineInput => {
  if (o.kind === "outage") {
    const from = clock.now
    clock.now += o.length
    return { type: "outage", from, to: clock.now }
  }
  clock.now += o.dt
  switch (o.kind) {
    case "tick":
      if (o.toDue && due !== null) clock.now = Math.max(clock.now, due)
      return { type: "tick" }
    case "answer": {
      const open = state.actions.filter((r) => r.state === "dispatched" || r.state === "waiting")
      const run = open[o.pick % Math.max(1, open.length)]
      if (!run) return { type: "tick" }
      const typeId = state.recipe.Actions.find((a) => a.Name === run.action)!.TypeId
      const routing = run.correlationId !== undefined ? { correlationId: run.correlationId } : { eventType: typeId }
      return { type: "event", ...routing, data: o.data, ...(o.error ? { error: "station error" } : {}) }
    }
    case "prompt": {
      const open = state.actions.filter((r) => (r.state === "dispatched" || r.state === "waiting") && r.deadline !== undefined)
      const run = open.sort((a, b) => a.deadline! - b.deadline!)[0]
      if (!run) return { type: "tick" }
      const typeId = state.recipe.Actions.find((a) => a.Name === run.action)!.TypeId
      return { type: "event", ...(run.correlationId !== undefined ? { correlationId: run.correlationId } : { eventType: typeId }), data: o.data }
    }
    case "hold": {
      const open = state.actions.filter((r) => r.state === "dispatched")
      const run = open[o.pick % Math.max(1, open.length)]
      if (!run) return { type: "tick" }
      const action = state.recipe.Actions.find((a) => a.Name === run.action)!
      return {
        type: "hold",
        command: {
          type: "command", jobId: JOB, action: run.action, correlationId: run.correlationId!, typeId: action.TypeId,
          parameters: (action.Parameters ?? {}) as Record<string, unknown>, subject: SCOPE, attempt: run.attempts
        }
      }
    }
    case "stray": {
      const id = pastIds[o.pick % Math.max(1, pastIds.length)]
      return o.pick % 3 === 0 || id === undefined ? { type: "event", eventType: "t.unknown", data: {} } : { type: "event", correlationId: id, data: {} }
    }
    default:
      return { type: o.kind }
  }
}
