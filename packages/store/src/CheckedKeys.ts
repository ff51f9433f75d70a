import { type KeyFamily, KeyPartError, type KeyParts, type KeySchema } from "@microdcs/keyschema"
import { keyProblem } from "./DocumentInput.js"
import type { InvalidInput } from "./Errors.js"

/**
 * Builds many keys in plain code and remembers the first key part the schema refused: `key` (or
 * `checked`, for a key built elsewhere) returns "" for a refused key, so the caller builds on and
 * drops the result, and `refused()` gives the first problem.
 */
export const checkedKeys = (schema: KeySchema) => {
  let refused: InvalidInput | undefined
  const checked = (built: string | KeyPartError): string => {
    if (!(built instanceof KeyPartError)) return built
    refused ??= keyProblem(built)
    return ""
  }
  const key = <F extends KeyFamily>(family: F, parts: KeyParts<F>): string => checked(schema.key(family, parts))
  return { key, checked, refused: (): InvalidInput | undefined => refused }
}
