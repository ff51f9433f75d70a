import { Effect } from "effect"
import { ScopeRegistry, WorkMasterDao } from "@microdcs/store"
import { type RecipePins, workMasterDigest } from "./RecipeDigests.js"

/** One recipe of the catalogue: a work master of a scope that carries a recipe, with its digest. */
export interface CatalogueRecipe {
  readonly scope: string
  readonly workMasterId: string
  readonly version: number
  /** SHA-256 of the recipe's canonical JSON; `null` when the stored recipe does not validate. */
  readonly digest: string | null
  readonly valid: boolean
  /** The digest `RECIPE_DIGESTS` pins for this work master, or `null`. */
  readonly pinnedDigest: string | null
}

/**
 * The recipe catalogue: what the deployment put in place, per scope — every
 * stored work master that carries a recipe, with the digest executions of it record. Work masters
 * without a recipe are the MES's business and are left out; a listed id whose document is gone
 * (a delete in between) is skipped. Sorted by scope, then work master id.
 */
export const recipeCatalogue = (options: { readonly scope?: string | undefined; readonly pins?: RecipePins | undefined } = {}) =>
  Effect.gen(function* () {
    const dao = yield* WorkMasterDao
    const scopes = options.scope === undefined ? [...(yield* Effect.flatMap(ScopeRegistry, (s) => s.list))].sort() : [options.scope]
    const recipes: Array<CatalogueRecipe> = []
    for (const scope of scopes) {
      const ids = yield* dao.list(scope)
      const found = yield* Effect.forEach(
        ids,
        (id) =>
          dao.get(id).pipe(
            Effect.map((stored) => ({ id, stored })),
            Effect.catchTag("NotFound", () => Effect.succeed(undefined))
          ),
        { concurrency: 16 }
      )
      for (const item of found) {
        if (item === undefined) continue
        const digest = workMasterDigest(parseOrUndefined(item.stored.doc))
        if (digest._tag === "NoRecipe") continue
        recipes.push({
          scope,
          workMasterId: item.id,
          version: item.stored.version,
          digest: digest._tag === "Recipe" ? digest.digest : null,
          valid: digest._tag === "Recipe",
          pinnedDigest: options.pins?.get(item.id) ?? null
        })
      }
    }
    return recipes
  })

const parseOrUndefined = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
