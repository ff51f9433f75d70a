import type { KeySchema } from "@microdcs/keyschema"
import { checkedKeys } from "./CheckedKeys.js"
import type { SfcJobOrderMove } from "@microdcs/lua-scripts"
import { documentProblem } from "./DocumentInput.js"
import { InvalidInput } from "./Errors.js"
import { jobOrderSearchFacts } from "./JobOrderSearchFacts.js"
import { textProblem } from "./SfcStateInput.js"

/**
 * A move of the job's job order (id = the job id) written in the same script call as the job's
 * state: the versioned put `JobOrderDao.put` makes (the document, its list, `scopes`, a change
 * entry), when the job order is still at `expectedVersion` in `scope`. It never refuses the
 * state's write: a job order moved meanwhile (or missing, or of another type) is left as it is,
 * and the write's result says so (`jobOrderVersion` 0).
 */
export interface SfcJobOrderMoveInput {
  /** The job order's scope. */
  readonly scope: string
  /** The job order version the move was computed from (a positive integer). */
  readonly expectedVersion: number
  /** The job order document after the move (JSON text). */
  readonly doc: string
  /** The list score (the job order's priority). */
  readonly priority: number
  /** The change word of the change entry: the trigger. */
  readonly change: string
  readonly op: string
  /** Who caused the move (JSON text), as `JobOrderDao.put`'s `origin`. */
  readonly origin?: string | undefined
}

const problem = (field: string, message: string) => new InvalidInput({ field, message })

/** Why a move is refused before its keys are built, or `undefined`. */
const moveProblem = (move: SfcJobOrderMoveInput, maxBytes: number): InvalidInput | undefined => {
  if (!Number.isSafeInteger(move.expectedVersion) || move.expectedVersion <= 0) {
    return problem("jobOrderMove.expectedVersion", "jobOrderMove.expectedVersion must be a positive integer")
  }
  if (typeof move.priority !== "number" || !Number.isFinite(move.priority)) return problem("jobOrderMove.priority", "jobOrderMove.priority must be a finite number")
  return (
    documentProblem("jobOrderMove.doc", move.doc, maxBytes) ??
    textProblem("jobOrderMove.change", move.change) ??
    textProblem("jobOrderMove.op", move.op) ??
    (move.origin !== undefined && move.origin !== "" ? textProblem("jobOrderMove.origin", move.origin) : undefined)
  )
}

/** The script's part of a move of job order `id`, or why it is refused. */
export const preparedMove = (schema: KeySchema, id: string, move: SfcJobOrderMoveInput, maxBytes: number): SfcJobOrderMove | InvalidInput => {
  const refused = moveProblem(move, maxBytes)
  if (refused) return refused
  const { key, refused: badKey } = checkedKeys(schema)
  const keys = { doc: key("jobOrder", { id }), list: key("jobOrderList", { scope: move.scope }), scopes: key("scopes", {}), changes: key("changes", { scope: move.scope }),
    search: key("jobOrderSearch", { scope: move.scope })
  }
  const changesChannel = key("nudge", { kind: "changes" })
  const keyRefused = badKey()
  if (keyRefused) return keyRefused
  const { scope, expectedVersion, doc, priority, change, op } = move
  return { keys, expectedVersion, scope, id, priority, doc, op, change, origin: move.origin ?? "", changesChannel, facts: jobOrderSearchFacts(doc) }
}
