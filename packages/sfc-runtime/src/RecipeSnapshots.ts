import { Effect, Result, Option, Context, Layer } from "effect"
import { canonicalJson, type ConnectionError, InvalidInput, jsonDocument, recipeDigestOf, SfcRecipes, type WrongType } from "@microdcs/store"
import { type ExecutionState, type Recipe, validateWorkMasterRecipe } from "@microdcs/sfc"
import { BoundedMap } from "./BoundedMap.js"

/** Recipes and validated work master documents (each by digest) one process keeps. */
const CACHED_RECIPES = 1_000

/** What a work master's document says about its recipe. */
export type WorkMasterRecipe =
  | { readonly _tag: "Recipe"; readonly recipe: Recipe }
  | { readonly _tag: "NoRecipe" }
  | { readonly _tag: "Invalid" }

/** The stored recipes and what this process keeps of them. */
interface SnapshotDeps {
  readonly recipes: SfcRecipes["Service"]
  readonly byDigest: BoundedMap<string, Recipe>
  readonly workMasters: BoundedMap<string, WorkMasterRecipe>
  // The digest of each recipe object: a work master's recipe is validated once per document
  // (`workMasterRecipe`), so every job start hands in the same object and the canonical text
  // and its SHA-256 are built once per recipe, not once per start.
  readonly digests: WeakMap<Recipe, string>
}

/** Stores the snapshot (once per process and digest) and returns the digest and the shared recipe. */
const snapshot = (deps: SnapshotDeps, recipe: Recipe): Effect.Effect<{ readonly digest: string; readonly recipe: Recipe }, InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    const { byDigest, digests } = deps
    const seen = digests.get(recipe)
    const seenRecipe = seen === undefined ? undefined : byDigest.get(seen)
    if (seen !== undefined && seenRecipe !== undefined) return { digest: seen, recipe: seenRecipe }
    // Canonical JSON: the digest is the catalogue's, whatever key order a sender wrote.
    const text = canonicalJson(recipe)
    const digest = recipeDigestOf(text)
    digests.set(recipe, digest)
    const known = byDigest.get(digest)
    if (known !== undefined) return { digest, recipe: known }
    yield* deps.recipes.store(text)
    byDigest.set(digest, recipe)
    return { digest, recipe }
  })

const recipeOf = (deps: SnapshotDeps, digest: string): Effect.Effect<Recipe, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const known = deps.byDigest.get(digest)
    if (known !== undefined) return known
    const text = yield* deps.recipes.get(digest)
    if (Option.isNone(text)) {
      return yield* new InvalidInput({ field: "recipeDigest", message: `the execution's recipe ${digest} is not stored` })
    }
    // Stored by `snapshot` from a validated recipe: trusted like the snapshot inside old states.
    const recipe = JSON.parse(text.value) as Recipe
    deps.byDigest.set(digest, recipe)
    return recipe
  })

/** The state a stored document holds: with the recipe from its digest, or the one it carries. */
const decodeState = (deps: SnapshotDeps, doc: string): Effect.Effect<ExecutionState, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const stored = JSON.parse(doc) as Omit<ExecutionState, "recipe"> & { readonly recipe?: Recipe }
    if (stored.recipe !== undefined || stored.recipeDigest === undefined) return stored as ExecutionState
    return { ...stored, recipe: yield* recipeOf(deps, stored.recipeDigest) }
  })

/**
 * The document text of a state: without the recipe when it names its digest. Built by the
 * store's `jsonDocument`, so the CAS does not parse it again to see that it is JSON.
 */
const encodeState = (state: ExecutionState): string => {
  if (state.recipeDigest === undefined) return jsonDocument(state)
  const { recipe: _recipe, ...rest } = state
  return jsonDocument(rest)
}

/** The recipe of a work master document, validated once per document text (keyed by its digest). */
const workMasterRecipe = ({ workMasters }: SnapshotDeps, doc: string): WorkMasterRecipe => {
  const key = recipeDigestOf(doc)
  const known = workMasters.get(key)
  if (known !== undefined) return known
  let parsed: unknown
  try {
    parsed = JSON.parse(doc)
  } catch {
    parsed = undefined
  }
  const checked = parsed === undefined ? undefined : validateWorkMasterRecipe(parsed)
  const result: WorkMasterRecipe =
    checked === undefined ? { _tag: "NoRecipe" } : Result.isFailure(checked) ? { _tag: "Invalid" } : { _tag: "Recipe", recipe: checked.success }
  workMasters.set(key, result)
  return result
}

/**
 * The recipe snapshots of executions, stored once per recipe by digest
 * (`sfc:recipe:{digest}`, immutable) instead of inside every state write. Jobs of one recipe
 * share one stored copy and one in-memory recipe object, so the core's recipe index (cached by
 * the recipe's identity) is built once per process, not per write. A work master changed or
 * deleted mid-run changes nothing: the state names the digest of what it started with.
 */
export class RecipeSnapshots extends Context.Service<RecipeSnapshots>()("@microdcs/sfc/RecipeSnapshots", {
  make: Effect.gen(function* () {
    const deps: SnapshotDeps = {
      recipes: yield* SfcRecipes,
      byDigest: new BoundedMap<string, Recipe>(CACHED_RECIPES),
      workMasters: new BoundedMap<string, WorkMasterRecipe>(CACHED_RECIPES),
      digests: new WeakMap<Recipe, string>()
    }
    return {
      snapshot: (recipe: Recipe) => snapshot(deps, recipe),
      recipeOf: (digest: string) => recipeOf(deps, digest),
      decodeState: (doc: string) => decodeState(deps, doc),
      encodeState,
      workMasterRecipe: (doc: string) => workMasterRecipe(deps, doc)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
