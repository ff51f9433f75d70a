import { Effect } from "effect"
import { checkKeyPart } from "@microdcs/keyschema"
import { InvalidInput } from "./Errors.js"

/**
 * Input checks shared by the small DAOs. Values that are not key parts themselves (dedupe
 * source/id, tokens, holder ids, set members) follow the key-part rules anyway: non-empty,
 * well-formed UTF-8, at most 512 bytes. They may end up in a key elsewhere, and a lone
 * surrogate would be silently replaced on the wire.
 */
export const validateText = (field: string, value: string): Effect.Effect<void, InvalidInput> =>
  Effect.suspend(() => {
    if (typeof value !== "string") return Effect.fail(new InvalidInput({ field, message: `${field} must be a string` }))
    const problem = checkKeyPart(field, value)
    return problem ? Effect.fail(new InvalidInput({ field, message: problem.message })) : Effect.void
  })

/** Validates every entry of a list, naming the first bad one as `field[i]`. */
export const validateTexts = (field: string, values: ReadonlyArray<string>): Effect.Effect<void, InvalidInput> =>
  Effect.suspend(() => {
    if (!Array.isArray(values)) return Effect.fail(new InvalidInput({ field, message: `${field} must be an array` }))
    return Effect.forEach(values, (value, i) => validateText(`${field}[${i}]`, value), { discard: true })
  })

/** A TTL or lease in ms: a positive safe integer (PX rejects 0 and fractions). */
export const validatePositiveMs = (field: string, value: number): Effect.Effect<void, InvalidInput> =>
  Number.isSafeInteger(value) && value > 0
    ? Effect.void
    : Effect.fail(new InvalidInput({ field, message: `${field} must be a positive integer number of ms, got ${value}` }))

export const validateNonNegativeInteger = (field: string, value: number): Effect.Effect<void, InvalidInput> =>
  Number.isSafeInteger(value) && value >= 0
    ? Effect.void
    : Effect.fail(new InvalidInput({ field, message: `${field} must be a non-negative integer, got ${value}` }))

/** Stream ids as Valkey writes them: `ms-seq`. */
export const streamIdPattern = /^\d+-\d+$/

const MAX_ID_PART = 2n ** 64n - 1n

/** A complete stream id whose parts fit the server's 64-bit fields (a longer one is a server error). */
export const validateStreamId = (field: string, value: string): Effect.Effect<void, InvalidInput> =>
  typeof value === "string" && streamIdPattern.test(value) && value.split("-").every((part) => BigInt(part) <= MAX_ID_PART)
    ? Effect.void
    : Effect.fail(new InvalidInput({ field, message: `${field} must be a stream id like 1700000000000-0, got '${value}'` }))
