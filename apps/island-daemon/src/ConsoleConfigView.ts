import { Effect, Result } from "effect"
import { canonicalRecipeDigest, JobAcceptanceDao, ReferenceListDao, ScopeRegistry, WorkMasterDao } from "@microdcs/store"
import { formatPath, validateWorkMasterRecipe } from "@microdcs/sfc"
import { recipeGraph } from "./ConsoleGraph.js"

/** The reference lists of a scope (keyschema's `referenceKinds`). */
const REFERENCE_KINDS = ["equipment", "materialclass", "materialdefinition", "personnel", "physicalasset"] as const

/** Members shown per reference list; the count is always the full one. */
const SHOWN_MEMBERS = 200

/** One work master with its recipe: the digest jobs started from it snapshot, and the graph. */
const workMasterOf = (id: string) =>
  Effect.gen(function* () {
    const doc = yield* Effect.flatMap(WorkMasterDao, (dao) => dao.get(id))
    const parsed = JSON.parse(doc.doc) as Record<string, unknown>
    const description = typeof parsed["Description"] === "string" ? parsed["Description"] : null
    const recipe = validateWorkMasterRecipe(parsed)
    if (recipe === undefined) return { id, version: doc.version, description, digest: null, graph: null, problems: [] as ReadonlyArray<string> }
    if (Result.isFailure(recipe)) {
      return { id, version: doc.version, description, digest: null, graph: null, problems: recipe.failure.map((p) => `${formatPath(p.path)}: ${p.message}`) }
    }
    // The catalogue's digest, the one executions record: SHA-256 of the recipe's canonical JSON.
    const digest = canonicalRecipeDigest(recipe.success)
    const graph = yield* recipeGraph(digest, recipe.success).pipe(Effect.orElseSucceed(() => null))
    return { id, version: doc.version, description, digest, graph, problems: [] as ReadonlyArray<string> }
  })

/**
 * The configuration page: per scope its work masters with their recipes (graph,
 * digest), its reference lists and its acceptance limit.
 */
export const configView = Effect.gen(function* () {
  const scopes = [...(yield* Effect.flatMap(ScopeRegistry, (r) => r.list))].sort()
  const workMasters = yield* WorkMasterDao
  const references = yield* ReferenceListDao
  const acceptance = yield* JobAcceptanceDao
  return {
    scopes: yield* Effect.forEach(scopes, (scope) =>
      Effect.gen(function* () {
        const ids = yield* workMasters.list(scope)
        const lists = yield* Effect.forEach(REFERENCE_KINDS, (kind) =>
          Effect.map(references.members(kind, scope), (members) => ({ kind, count: members.length, members: [...members].sort().slice(0, SHOWN_MEMBERS) }))
        )
        const limit = yield* acceptance.get(scope)
        return {
          scope,
          acceptanceLimit: limit._tag === "Some" ? limit.value : null,
          workMasters: yield* Effect.forEach(ids, (id) => workMasterOf(id).pipe(Effect.catchTag("NotFound", () => Effect.succeed(null)))).pipe(
            Effect.map((all) => all.filter((w) => w !== null))
          ),
          referenceLists: lists
        }
      })
    )
  }
})
