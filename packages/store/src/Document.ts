import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import type { KeyPartError } from "@microdcs/keyschema"
import type { WriteReply } from "@microdcs/lua-scripts"
import { InvalidInput, LimitReached, NotFound, ScopeConflict, VersionConflict, WrongType } from "./Errors.js"

/** A stored document as every DAO returns it; the codec of `doc` belongs to the caller. */
export interface StoredDocument {
  readonly id: string
  readonly scope: string
  readonly version: number
  /** Operation id of the last write. */
  readonly op: string
  readonly doc: string
}

/** The result of a successful write. */
export interface Written {
  readonly version: number
  readonly op: string
}

/** `-1` overwrites unconditionally, `0` creates only, `n > 0` must equal the stored version. */
export type ExpectedVersion = number

export const newOperationId = (): string => randomUUID()

/** Rejects a document that is not well-formed UTF-8, is over the size limit, or is not JSON. */
/** A refused key part as the store's input error, naming the part. */
export const keyProblem = (error: KeyPartError): InvalidInput => new InvalidInput({ field: error.name, message: error.message })

/** Why a document text is refused, or `undefined`: the synchronous core of {@link validateDocument}. */
export const documentProblem = (field: string, text: string, maxBytes: number): InvalidInput | undefined => {
  if (typeof text !== "string") return new InvalidInput({ field, message: `${field} must be a string` })
  if (!text.isWellFormed()) return new InvalidInput({ field, message: `${field} is not well-formed UTF-8` })
  const bytes = Buffer.byteLength(text, "utf8")
  if (bytes > maxBytes) return new InvalidInput({ field, message: `${field} is ${bytes} bytes; the limit is ${maxBytes}` })
  try {
    JSON.parse(text)
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

/** The typed error each failing write status maps to. */
export interface WriteFailures {
  readonly conflict: VersionConflict
  readonly scope: ScopeConflict
  readonly limit: LimitReached
  readonly wrongtype: WrongType
  readonly notfound: NotFound
}

/**
 * Maps a script's write reply to the new version or the typed error of its status. The error
 * type follows the statuses the script can give. `retry` is not handled here: only the DAO
 * knows what to read again.
 */
export const writeResult = <R extends Exclude<WriteReply, { status: "retry" }>>(
  key: string,
  expected: number,
  requestedScope: string,
  reply: R
): Effect.Effect<number, WriteFailures[Exclude<R["status"], "ok"> & keyof WriteFailures]> => {
  const typed = reply as Exclude<WriteReply, { status: "retry" }>
  let failure: WriteFailures[keyof WriteFailures]
  switch (typed.status) {
    case "ok":
      return Effect.succeed(typed.version)
    case "conflict":
      failure = new VersionConflict({ key, expected, actual: typed.actual })
      break
    case "scope":
      failure = new ScopeConflict({ key, storedScope: typed.storedScope, requestedScope })
      break
    case "limit":
      failure = new LimitReached({ key, limit: typed.limit, count: typed.count })
      break
    case "wrongtype":
      failure = new WrongType({ key: typed.key, actual: typed.actual, expected: typed.expected })
      break
    case "notfound":
      failure = new NotFound({ key, message: `${key} does not exist` })
      break
  }
  return Effect.fail(failure) as Effect.Effect<never, WriteFailures[Exclude<R["status"], "ok"> & keyof WriteFailures]>
}

// The unknown-outcome check lives in OutcomeCheck.ts; these names are part of the public API.
export { type ChangeRecord, landed, operationLanded, resolveUnknownOutcome, type WriteInDoubt, writeOutcome, type WriteOutcome } from "./OutcomeCheck.js"

/** Parses a document hash as returned by HGETALL; `undefined` when the key does not exist. */
export const parseDocumentHash = (id: string, hash: Record<string, string>): StoredDocument | undefined => {
  if (hash["v"] === undefined || hash["doc"] === undefined) return undefined
  return { id, scope: hash["scope"] ?? "", version: Number(hash["v"]), op: hash["op"] ?? "", doc: hash["doc"] }
}
