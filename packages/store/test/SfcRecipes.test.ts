import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { recipeDigestOf, SfcRecipes, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const testStore = (options: { readonly prefix: string }) =>
  SfcRecipes.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: options.prefix })))

// Recipes by digest (issue 11): stored once, never changed, shared by every execution state of that recipe.

const recipe = JSON.stringify({ Steps: [{ Name: "A", Initial: true }], Transitions: [], Actions: [] })

describe("SfcRecipes", () => {
  it.effect("stores a recipe under the SHA-256 of its text once; a second store changes nothing", () =>
    Effect.gen(function* () {
      const recipes = yield* SfcRecipes
      const valkey = yield* Valkey
      const digest = yield* recipes.store(recipe)
      expect(digest).toBe(recipeDigestOf(recipe))
      expect(digest).toMatch(/^[0-9a-f]{64}$/)
      expect(yield* recipes.get(digest)).toEqual(Option.some(recipe))
      expect(yield* recipes.store(recipe)).toBe(digest)
      const key = yield* valkey.key("sfcRecipe", { digest })
      expect(yield* unsafeCommand(valkey, "ttl", (c) => c.pttl(key))).toBe(-1)
      expect(yield* recipes.get(recipeDigestOf("{}"))).toEqual(Option.none())
    }).pipe(Effect.provide(testStore({ prefix: randomPrefix("sfc-recipes") })))
  )

  it.effect("refuses a text that is no JSON and a digest that is no SHA-256, writing nothing", () =>
    Effect.gen(function* () {
      const recipes = yield* SfcRecipes
      const valkey = yield* Valkey
      const refused = yield* Effect.flip(recipes.store("{not json"))
      expect(refused).toMatchObject({ _tag: "InvalidInput", field: "recipe" })
      const key = yield* valkey.key("sfcRecipe", { digest: recipeDigestOf("{not json") })
      expect(yield* unsafeCommand(valkey, "exists", (c) => c.exists(key))).toBe(0)
      expect(yield* Effect.flip(recipes.get("ABC"))).toMatchObject({ _tag: "InvalidInput", field: "digest" })
    }).pipe(Effect.provide(testStore({ prefix: randomPrefix("sfc-recipes") })))
  )
})
