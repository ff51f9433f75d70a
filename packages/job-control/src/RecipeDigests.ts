import { Result } from "effect"
import { validateWorkMasterRecipe } from "@microdcs/sfc"
import { canonicalRecipeDigest } from "@microdcs/store"

/**
 * Pinned recipe digests: work master id → the SHA-256 its recipe must have.
 * A deployment that pins a work master refuses any version of it whose recipe is another.
 */
export type RecipePins = ReadonlyMap<string, string>

const DIGEST = /^[0-9a-f]{64}$/

/**
 * Parses `RECIPE_DIGESTS`: `workMasterId=sha256,...` (spaces around entries ignored, the digest
 * in hex of either case). The id is what comes before the last `=`, so an id may contain one.
 * Every problem is listed; an empty text pins nothing.
 */
export const parseRecipePins = (text: string): Result.Result<RecipePins, string> => {
  const pins = new Map<string, string>()
  const problems: Array<string> = []
  const entries = text.split(",").map((e) => e.trim())
  if (entries.every((e) => e.length === 0)) return Result.succeed(pins)
  for (const [i, entry] of entries.entries()) {
    const at = entry.lastIndexOf("=")
    const id = at < 0 ? "" : entry.slice(0, at).trim()
    const digest = at < 0 ? "" : entry.slice(at + 1).trim().toLowerCase()
    if (at < 0 || id.length === 0) problems.push(`entry ${i + 1} '${entry}' is not workMasterId=sha256`)
    else if (!DIGEST.test(digest)) problems.push(`entry ${i + 1} (${id}): '${entry.slice(at + 1).trim()}' is not a SHA-256 digest (64 hex characters)`)
    else if (pins.has(id) && pins.get(id) !== digest) problems.push(`entry ${i + 1}: ${id} is pinned twice, to different digests`)
    else pins.set(id, digest)
  }
  return problems.length === 0 ? Result.succeed(pins) : Result.fail(problems.join("; "))
}

/** What a work master document says about its recipe's digest. */
export type WorkMasterDigest =
  | { readonly _tag: "Recipe"; readonly digest: string }
  | { readonly _tag: "NoRecipe" }
  | { readonly _tag: "Invalid"; readonly problems: number }

/**
 * The digest of a work master's recipe: SHA-256 of the canonical JSON of the recipe as the engine
 * validated it (so the same recipe has one digest however the sender ordered its keys).
 */
export const workMasterDigest = (document: unknown): WorkMasterDigest => {
  const recipe = validateWorkMasterRecipe(document)
  if (recipe === undefined) return { _tag: "NoRecipe" }
  return Result.isSuccess(recipe) ? { _tag: "Recipe", digest: canonicalRecipeDigest(recipe.success) } : { _tag: "Invalid", problems: recipe.failure.length }
}

/** Why a work master may not be stored under the pins, naming both digests; `undefined` when it may. */
export const pinProblem = (pins: RecipePins, id: string, document: unknown): string | undefined => {
  const pinned = pins.get(id)
  if (pinned === undefined) return undefined
  const actual = workMasterDigest(document)
  if (actual._tag === "Recipe") {
    return actual.digest === pinned ? undefined : `work master ${id}: its recipe has digest ${actual.digest}, but RECIPE_DIGESTS pins ${pinned}`
  }
  return `work master ${id}: RECIPE_DIGESTS pins recipe digest ${pinned}, but the work master carries ${actual._tag === "NoRecipe" ? "no recipe" : "an invalid recipe"}`
}
