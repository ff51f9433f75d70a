import { Effect, Result, Exit } from "effect"
import { describe, expect, it, layer } from "@effect/vitest"
import { ReturnStatus } from "@microdcs/job-state"
import { canonicalJson, canonicalRecipeDigest, WorkMasterDao } from "@microdcs/store"
import { validateWorkMasterRecipe } from "@microdcs/sfc"
import { JobControlOptions, parseRecipePins, recipeCatalogue, workMasterDigest } from "@microdcs/job-control"
import { configRequest, fixture, handle, handleOk, snapshot, world } from "./Kit.js"

const axle = fixture("work-master-axle.json") as Record<string, unknown> & { data: Record<string, unknown> }
const axleDigest = (() => {
  const digest = workMasterDigest(axle)
  if (digest._tag !== "Recipe") throw new Error("the axle fixture carries a valid recipe")
  return digest.digest
})()

/** The axle work master with its recipe's keys in reverse order, everywhere: the same recipe. */
const reordered = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(reordered)
    : typeof value === "object" && value !== null
      ? Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reordered(v)]))
      : value

describe("recipe digests", () => {
  it("canonical JSON sorts keys and drops spacing: key order and whitespace do not change the digest", () => {
    expect(canonicalJson({ b: [1, { d: null, c: "x" }], a: true, u: undefined })).toBe(`{"a":true,"b":[1,{"c":"x","d":null}]}`)
    expect(workMasterDigest(reordered(axle))).toEqual({ _tag: "Recipe", digest: axleDigest })
    expect(workMasterDigest(JSON.parse(JSON.stringify(axle, null, 4)))).toEqual({ _tag: "Recipe", digest: axleDigest })
    // The digest is over the recipe as the engine validated it.
    expect(axleDigest).toBe(canonicalRecipeDigest((validateWorkMasterRecipe(axle) as Result.Success<never, unknown>).success))
    expect(axleDigest).toMatch(/^[0-9a-f]{64}$/)
    const changed = { ...axle, data: { ...axle.data, Steps: [...(axle.data["Steps"] as Array<unknown>), { Name: "Extra" }] } }
    expect(workMasterDigest(changed)).not.toEqual({ _tag: "Recipe", digest: axleDigest })
    expect(workMasterDigest({ ID: "plain" })).toEqual({ _tag: "NoRecipe" })
  })

  it("RECIPE_DIGESTS parses workMasterId=sha256 lists; every malformed entry is named", () => {
    const d = "a".repeat(64)
    expect(parseRecipePins("")).toEqual(Result.succeed(new Map()))
    expect(parseRecipePins(` wm-1=${d.toUpperCase()} , wm=2=${d}`)).toEqual(Result.succeed(new Map([["wm-1", d], ["wm=2", d]])))
    const bad = parseRecipePins(`wm-1, =${d}, wm-2=abc, wm-3=${d}, wm-3=${"b".repeat(64)}`)
    expect(Result.isFailure(bad)).toBe(true)
    const text = Result.isFailure(bad) ? bad.failure : ""
    expect(text).toContain("entry 1 'wm-1' is not workMasterId=sha256")
    expect(text).toContain("entry 2")
    expect(text).toContain("entry 3 (wm-2): 'abc' is not a SHA-256 digest")
    expect(text).toContain("entry 5: wm-3 is pinned twice")
  })

  it.effect("a pinned digest that is no SHA-256 is refused when the options are built", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Effect.provide(JobControlOptions, JobControlOptions.layer({ recipeDigests: new Map([["wm", "nope"]]) })))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(exit).toMatchObject({ cause: { reasons: [{ _tag: "Fail", error: { _tag: "InvalidInput", field: "recipeDigests" } }] } })
    })
  )
})

const other = "c".repeat(64)

layer(world({ recipeDigests: new Map([["wm-axle-v1", axleDigest], ["wm-pinned-plain", other], ["wm-other", other]]) }))("recipe pinning", (it) => {
  it.effect("a work master whose recipe matches its pin is stored; key order does not matter", () =>
    Effect.gen(function* () {
      yield* handleOk(configRequest("workmaster", "pins", reordered(axle)))
      expect((yield* (yield* WorkMasterDao).get("wm-axle-v1")).scope).toBe("pins")
    })
  )

  it.effect("a mismatching recipe is refused with both digests named, and nothing is stored", () =>
    Effect.gen(function* () {
      const changed = { ...axle, ID: "wm-other" }
      const before = yield* snapshot
      const result = yield* handle(configRequest("workmaster", "pins", changed))
      expect(result.reply.status).toBe(ReturnStatus.INVALID_REQUEST)
      expect(result.reply.error?.kind).toBe("RecipeDigestMismatch")
      expect(result.reply.error?.message).toContain(axleDigest)
      expect(result.reply.error?.message).toContain(other)
      expect(result.reply.data).toMatchObject({ ID: "wm-other", PinnedDigest: other, RecipeDigest: axleDigest })
      const plain = yield* handle(configRequest("workmaster", "pins", { ID: "wm-pinned-plain" }))
      expect(plain.reply.error?.message).toContain("carries no recipe")
      expect(yield* snapshot).toEqual(before)
    })
  )

  it.effect("an unpinned work master is stored as before; the catalogue lists the recipes with digests and pins", () =>
    Effect.gen(function* () {
      yield* handleOk(configRequest("workmaster", "cat", { ...axle, ID: "wm-free" }))
      yield* handleOk(configRequest("workmaster", "cat", { ID: "wm-no-recipe" }))
      const pins = new Map([["wm-free", other]])
      expect(yield* recipeCatalogue({ scope: "cat", pins })).toEqual([
        { scope: "cat", workMasterId: "wm-free", version: 1, digest: axleDigest, valid: true, pinnedDigest: other }
      ])
      const all = yield* recipeCatalogue()
      expect(all.map((r) => `${r.scope}/${r.workMasterId}`)).toEqual(["cat/wm-free", "pins/wm-axle-v1"])
    })
  )
})
