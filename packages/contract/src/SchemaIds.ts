import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"

/**
 * Where the contract's JSON Schemas live: each has the `$id`
 * `{SCHEMA_BASE}{name}/v{x.y.z}/` (the recipe's dataschema id is one of them) and the repository
 * publishes it as `docs/schemas/{name}/v{x.y.z}/schema.json`.
 */
export const SCHEMA_BASE = RECIPE_SCHEMA_ID.slice(0, RECIPE_SCHEMA_ID.indexOf("/sfc-recipe/") + 1)

/** `{SCHEMA_BASE}{name}/v{version}/`. */
export const schemaId = (name: string, version: string): string => `${SCHEMA_BASE}${name}/v${version}/`

/** The name and version an id of {@link schemaId}'s form carries, or undefined for any other id. */
export const parseSchemaId = (id: string): { readonly name: string; readonly version: string } | undefined => {
  const match = /^([a-z0-9-]+)\/v(\d+\.\d+\.\d+)\/$/.exec(id.startsWith(SCHEMA_BASE) ? id.slice(SCHEMA_BASE.length) : "")
  return match === null ? undefined : { name: match[1]!, version: match[2]! }
}

/** The repository path of a schema by its id: `docs/schemas/{name}/v{version}/schema.json`. */
export const schemaFile = (id: string): string => {
  const parsed = parseSchemaId(id)
  if (parsed === undefined) throw new Error(`not a contract schema id: ${id}`)
  return `docs/schemas/${parsed.name}/v${parsed.version}/schema.json`
}
