import { type KeyFamily, KeyPartError, type KeyParts, type KeySchema } from "@microdcs/keyschema"
import { keyProblem } from "./DocumentInput.js"
import type { InvalidInput } from "./Errors.js"

/**
 * Builds many keys in plain code and remembers the first key part the schema refused: `key`
 * returns "" for a refused key (the caller drops the result), `refused()` the first problem.
 */
export const checkedKeys = (schema: KeySchema) => {
  let refused: InvalidInput | undefined
  const key = <F extends KeyFamily>(family: F, parts: KeyParts<F>): string => {
    const built = schema.key(family, parts)
    if (!(built instanceof KeyPartError)) return built
    refused ??= keyProblem(built)
    return ""
  }
  return { key, refused: (): InvalidInput | undefined => refused }
}
