import { Effect } from "effect"
import { checkKeyPart, type KeyPartError } from "@microdcs/keyschema"
import { InvalidInput } from "./Errors.js"
import { rememberParsed, takeBuiltJson } from "./JsonDocument.js"

/**
 * The input checks of a document write, for the store's DAOs and for DAOs built outside it.
 * Each check has a synchronous core (`...Problem`, the refusal or `undefined`) for hot paths,
 * and an Effect form. This module depends on nothing but the errors: the `Valkey` service
 * uses {@link keyProblem} too.
 */

/** A refused key part as the store's input error, naming the part. */
export const keyProblem = (error: KeyPartError): InvalidInput => new InvalidInput({ field: error.name, message: error.message })

/**
 * Why a value that is not a key part itself (a member, a token) is refused, or `undefined`: it
 * follows the key-part rules anyway (non-empty, well-formed UTF-8, at most 512 bytes).
 */
export const keyPartProblem = (field: string, value: string): InvalidInput | undefined => {
  if (typeof value !== "string") return new InvalidInput({ field, message: `${field} must be a string` })
  const problem = checkKeyPart(field, value)
  return problem ? new InvalidInput({ field, message: problem.message }) : undefined
}

/** Why a document text is refused, or `undefined`: the synchronous core of {@link validateDocument}. */
export const documentProblem = (field: string, text: string, maxBytes: number): InvalidInput | undefined => {
  if (typeof text !== "string") return new InvalidInput({ field, message: `${field} must be a string` })
  if (!text.isWellFormed()) return new InvalidInput({ field, message: `${field} is not well-formed UTF-8` })
  // A UTF-16 code unit is at most 3 UTF-8 bytes: most texts need no count (the client counts again).
  const bytes = text.length * 3 <= maxBytes ? 0 : Buffer.byteLength(text, "utf8")
  if (bytes > maxBytes) return new InvalidInput({ field, message: `${field} is ${bytes} bytes; the limit is ${maxBytes}` })
  // Built by JSON.stringify here (JsonDocument.ts): JSON by construction.
  if (takeBuiltJson(text)) return undefined
  try {
    rememberParsed(text, JSON.parse(text))
  } catch (error) {
    return new InvalidInput({ field, message: `${field} is not valid JSON: ${(error as Error).message}` })
  }
  return undefined
}

/** Rejects a document that is not well-formed UTF-8, is over the size limit, or is not JSON. */
export const validateDocument = (field: string, text: string, maxBytes: number): Effect.Effect<void, InvalidInput> =>
  Effect.suspend(() => {
    const problem = documentProblem(field, text, maxBytes)
    return problem ? Effect.fail(problem) : Effect.void
  })

export const expectedVersionProblem = (expected: number): InvalidInput | undefined =>
  Number.isSafeInteger(expected) && expected >= -1
    ? undefined
    : new InvalidInput({ field: "expectedVersion", message: "expectedVersion must be -1, 0 or a positive integer" })

export const numberProblem = (field: string, value: number): InvalidInput | undefined =>
  Number.isFinite(value) ? undefined : new InvalidInput({ field, message: `${field} must be a finite number` })

export const validateExpectedVersion = (expected: number): Effect.Effect<void, InvalidInput> => {
  const problem = expectedVersionProblem(expected)
  return problem ? Effect.fail(problem) : Effect.void
}

export const validateNumber = (field: string, value: number): Effect.Effect<void, InvalidInput> => {
  const problem = numberProblem(field, value)
  return problem ? Effect.fail(problem) : Effect.void
}
