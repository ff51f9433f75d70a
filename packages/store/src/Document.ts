import { randomUUID } from "node:crypto"

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

/** Parses a document hash as returned by HGETALL; `undefined` when the key does not exist. */
export const parseDocumentHash = (id: string, hash: Record<string, string>): StoredDocument | undefined => {
  if (hash["v"] === undefined || hash["doc"] === undefined) return undefined
  return { id, scope: hash["scope"] ?? "", version: Number(hash["v"]), op: hash["op"] ?? "", doc: hash["doc"] }
}

// The checks, the reply mapping and the unknown-outcome check each live in a module of their
// own; these names have always been part of the document API.
export {
  documentProblem,
  expectedVersionProblem,
  keyPartProblem,
  keyProblem,
  numberProblem,
  validateDocument,
  validateExpectedVersion,
  validateNumber
} from "./DocumentInput.js"
export { jsonDocument } from "./JsonDocument.js"
export { type WriteFailures, writeResult } from "./WriteReplies.js"
export { type ChangeRecord, landed, operationLanded, resolveUnknownOutcome, type WriteInDoubt, writeOutcome, type WriteOutcome } from "./OutcomeCheck.js"
