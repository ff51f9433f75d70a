import fc from "fast-check"
import { conditionTexts, type RecipeJsonSpec, recipesOf } from "./EngineArbitraries.js"

/**
 * Generators of v1.1.0 recipes for the engine's property tests (not a test file itself): the
 * recipes of EngineArbitraries.ts, their conditions drawn from a list with the v1.1.0
 * constructs, and time limits added.
 */

/** `$SELF` is the transition's own source step (S0 when it leaves a branch). */
const v11Texts = [
  ...conditionTexts,
  "$SELF.T >= 2s",
  "$SELF.T > 3s || ok",
  "$SELF.T < 1s",
  "counter.c < 2",
  "counter.c >= 3",
  "counter.c == 1 || missing",
  "counter.c >= 2 && $SELF.T > 1s",
  "S0.X",
  "!S0.X && ok",
  "S0.T > 500ms",
  "order.Priority > 1"
]

interface Extras {
  readonly limits: ReadonlyArray<{ readonly limit: string | null; readonly to: number | null }>
  readonly job: string | null
  /** Branches are left by a counter (so that converged branches wait often enough to be checked). */
  readonly countedExits: boolean
}

/** Adds the v1.1.0 fields: a step's MaxDuration (and OnMaxDuration into a top-level step or a branch), the job's limit. */
const withExtras = ({ limits, job, countedExits }: Extras) => (json: RecipeJsonSpec): object => {
  const steps = json.Steps as ReadonlyArray<{ readonly Name: string }>
  const branches = (json.Branches ?? []) as ReadonlyArray<{ readonly Name: string; readonly Branches: ReadonlyArray<ReadonlyArray<string>> }>
  const onPaths = new Set(branches.flatMap((b) => b.Branches.flat()))
  const targets = [...steps.map((s) => s.Name).filter((name) => !onPaths.has(name)), ...branches.map((b) => b.Name)]
  const isStep = new Set(steps.map((s) => s.Name))
  return {
    ...json,
    Steps: steps.map((s, i) => {
      const { limit, to } = limits[i] ?? { limit: null, to: null }
      if (limit === null) return s
      return { ...s, MaxDuration: limit, ...(to === null ? {} : { OnMaxDuration: targets[to % targets.length] }) }
    }),
    Transitions: (json.Transitions as ReadonlyArray<{ readonly Source: string; readonly Target: string; readonly Condition: string }>).map((t) => {
      const exit = !isStep.has(t.Source) && !onPaths.has(t.Target)
      return { ...t, Condition: countedExits && exit ? "counter.c >= 3" : t.Condition.replaceAll("$SELF", isStep.has(t.Source) ? t.Source : "S0") }
    }),
    ...(job === null ? {} : { MaxJobDuration: job }),
    SchemaVersion: "1.1.0"
  }
}

const extras: fc.Arbitrary<Extras> = fc.record({
  limits: fc.array(fc.record({ limit: fc.option(fc.constantFrom("1s", "3s", "10s"), { freq: 2 }), to: fc.option(fc.nat(), { freq: 3 }) }), { maxLength: 12 }),
  job: fc.option(fc.constantFrom("30s", "2min"), { freq: 3 }),
  countedExits: fc.boolean()
})

/** Small valid v1.1.0 recipes: those of `recipesOf` with step times, counters, flags, order fields and time limits. */
export const recipeV11 = recipesOf(v11Texts, extras.map(withExtras))
