import { recipeDigestOf } from "./SfcRecipes.js"

/**
 * The canonical JSON text of a value: object keys sorted by code unit (as RFC 8785 sorts them),
 * no whitespace, strings and numbers as `JSON.stringify` writes them, `undefined` members left
 * out as JSON leaves them out. Two documents that differ only in key order or spacing have the
 * same text, so a digest over it names the content, not how a sender happened to write it.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  const withJson = value as { toJSON?: unknown }
  if (typeof withJson.toJSON === "function") return canonicalJson((withJson.toJSON as () => unknown).call(value))
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && typeof v !== "function")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`
}

/** The digest of a recipe: SHA-256 of its canonical JSON, 64 lower-case hex characters. */
export const canonicalRecipeDigest = (recipe: unknown): string => recipeDigestOf(canonicalJson(recipe))
