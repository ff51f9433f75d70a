import { Result } from "effect"
import fc from "fast-check"
import { type Recipe, validateRecipe } from "@microdcs/sfc"

/**
 * Generators for the engine's property tests (not a test file itself): small valid recipes, and
 * abstract inputs that the test resolves against the state at hand (an answer picks one of the
 * actions open at that moment).
 */

// Few types and fields, so actions share types and conditions often read fields results have.
const typeIds = ["t.a", "t.b", "t.c"] as const
const conditions = ["true", "", "always", "ok", "!ok", "n > 1", "n <= 1", "x == 'a'", "ok || n >= 2", "a0.ok", "!a1.ok", "missing"]

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

const guard: fc.Arbitrary<Guard> = fc.record({ condition: fc.constantFrom(...conditions), priority: fc.integer({ min: 0, max: 2 }) })
const actionSpec: fc.Arbitrary<ActionSpec> = fc.record({
  interaction: fc.constantFrom("push_command" as const, "pull_event" as const),
  qualifier: fc.constantFrom("N" as const, "N" as const, "N" as const, "P" as const),
  typeId: fc.constantFrom(...typeIds),
  timeout: fc.integer({ min: 1, max: 5 })
})
const stepActions = fc.array(actionSpec, { maxLength: 2 })
const node: fc.Arbitrary<NodeSpec> = fc.oneof(
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

/** Small valid recipes: linear chains with selection and simultaneous branches, loops and skips. */
export const recipe: fc.Arbitrary<Recipe> = fc
  .tuple(
    stepActions.map((actions): NodeSpec => ({ kind: "step", actions })),
    fc.array(node, { maxLength: 4 }),
    fc.array(guard, { minLength: 4, maxLength: 4 }),
    fc.array(fc.record({ from: fc.nat(), to: fc.nat(), condition: fc.constantFrom(...conditions), priority: fc.integer({ min: 0, max: 2 }) }), { maxLength: 3 })
  )
  .map(([first, rest, chain, extra]) => validateRecipe(build([first, ...rest], chain, extra)))
  .filter(Result.isSuccess)
  .map((valid) => valid.success)

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
