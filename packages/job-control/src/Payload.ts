import { Data, Result } from "effect"
import { checkKeyPart } from "@microdcs/keyschema"
import type { RecipeProblem } from "@microdcs/sfc"

/**
 * Readers for request payloads. They are pure and total: anything a sender can put in `data`
 * becomes either a value or a {@link BadRequest}, and they run before the first store call, so
 * a bad request never writes anything.
 */

export type BadRequestKind =
  /** The CloudEvent type is none of ours. */
  | "UnknownType"
  /** No subject, so no scope. */
  | "MissingSubject"
  /** A required field is absent. */
  | "MissingField"
  /** A field is present with the wrong shape. */
  | "MalformedPayload"
  /** The `method` extension of a configuration event is neither PUT nor DELETE. */
  | "InvalidMethod"
  /** A work master names the recipe schema, but its recipe breaks the rules. */
  | "InvalidRecipe"
  /** The store refused a value (a key part or document over its limit). */
  | "InvalidInput"

/** The request cannot be processed as sent: INVALID_REQUEST, nothing written. */
export class BadRequest extends Data.TaggedError("BadRequest")<{
  readonly kind: BadRequestKind
  readonly message: string
  /** Every problem of a rejected recipe. */
  readonly problems?: ReadonlyArray<RecipeProblem>
}> {}

export const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const malformed = (message: string) => Result.fail(new BadRequest({ kind: "MalformedPayload", message }))
export const missing = (message: string) => Result.fail(new BadRequest({ kind: "MissingField", message }))

/** The request's `data` as an object. */
export const payloadObject = (data: unknown): Result.Result<Readonly<Record<string, unknown>>, BadRequest> => {
  if (data === undefined || data === null) return missing("the request carries no data")
  return isObject(data) ? Result.succeed(data) : malformed("data must be a JSON object")
}

/**
 * An id that will become (part of) a key: a non-empty string within the key-part rules, so the
 * store can never refuse it half-way through a request.
 */
// C0 controls, DEL and C1 controls: an id travels in MQTT topics and user properties, where a
// broker refuses them (mosquitto drops the connection), so such an id is refused at the door.
const controlCharacter = /[\u0000-\u001f\u007f-\u009f]/

export const asId = (value: unknown, where: string): Result.Result<string, BadRequest> => {
  if (typeof value !== "string") return malformed(`${where} must be a string`)
  // The id is quoted (cut to 100 characters); the MQTT binding escapes what a broker refuses.
  if (controlCharacter.test(value)) return malformed(`${where} '${value.slice(0, 100)}' must not contain control characters`)
  const problem = checkKeyPart(where, value)
  return problem ? malformed(problem.message) : Result.succeed(value)
}

/** A required id field of an object. */
export const readId = (object: Readonly<Record<string, unknown>>, field: string, where = field): Result.Result<string, BadRequest> =>
  object[field] === undefined || object[field] === null ? missing(`${where} is required`) : asId(object[field], where)

/**
 * The optional `Comment` of a method: a string, or the OPC UA form, an array of LocalizedText
 * (the English entry wins, else the first). The job order record keeps one string.
 */
export const readComment = (object: Readonly<Record<string, unknown>>): Result.Result<string | undefined, BadRequest> => {
  const comment = object["Comment"]
  if (comment === undefined || comment === null) return Result.succeed(undefined)
  if (typeof comment === "string") return Result.succeed(comment)
  if (!Array.isArray(comment) || !comment.every((c) => isObject(c) && typeof c["Text"] === "string")) {
    return malformed("Comment must be a string or a list of {Text, Locale}")
  }
  const texts = comment as ReadonlyArray<{ readonly Text: string; readonly Locale?: unknown }>
  return Result.succeed((texts.find((t) => t.Locale === "en") ?? texts[0])?.Text)
}

/** An optional non-negative integer field; `undefined` when absent. */
export const readCount = (
  object: Readonly<Record<string, unknown>>,
  field: string,
  { min, max }: { readonly min: number; readonly max: number }
): Result.Result<number | undefined, BadRequest> => {
  const value = object[field]
  if (value === undefined || value === null) return Result.succeed(undefined)
  return typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max
    ? Result.succeed(value)
    : malformed(`${field} must be an integer from ${min} to ${max}`)
}

/**
 * A document we will store as JSON text must survive `JSON.stringify`: a msgpack payload can
 * decode to a BigInt, which would make the encoder throw half-way through a handler.
 */
export const ensureJson = (value: unknown, where: string): Result.Result<void, BadRequest> => {
  try {
    JSON.stringify(value)
    return Result.void
  } catch (error) {
    return malformed(`${where} cannot be stored as JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
}
