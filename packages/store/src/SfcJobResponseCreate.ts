import type { KeySchema } from "@microdcs/keyschema"
import { checkedKeys } from "./CheckedKeys.js"
import type { SfcJobResponseCreate } from "@microdcs/lua-scripts"
import { documentProblem, numberProblem } from "./DocumentInput.js"
import { InvalidInput } from "./Errors.js"
import { textProblem } from "./SfcStateInput.js"

/**
 * A job response created in the same script call as a job's state: the create-only put
 * `JobResponseDao.put` makes with `expectedVersion: 0` (the document, its list, by-state and
 * by-order indexes, a change entry). It never refuses the state's write: a response that exists
 * (or a key of another type) is left as it is, and the write's result says so (`responseVersion` 0).
 */
export interface SfcJobResponseInput {
  readonly id: string
  /** The response's scope (its list and change stream). */
  readonly scope: string
  /** The job order it responds to. */
  readonly orderId: string
  /** The normalized state (see `normalizeState`); `""` = not indexed by state. */
  readonly state: string
  /** Start time in epoch ms, the list order. */
  readonly startTime: number
  /** End time in epoch ms, the order of the scope's failed set; absent = the start time. */
  readonly endTime?: number | undefined
  /** The job response as JSON text. */
  readonly doc: string
  readonly op: string
  /** The change word of the change entry (`ResultUpdate`). */
  readonly change: string
}

/** The script's part of a response, or why it is refused. */
export const preparedResponse = (schema: KeySchema, response: SfcJobResponseInput, maxBytes: number): SfcJobResponseCreate | InvalidInput => {
  const refused =
    numberProblem("jobResponse.startTime", response.startTime) ??
    numberProblem("jobResponse.endTime", response.endTime ?? response.startTime) ??
    documentProblem("jobResponse.doc", response.doc, maxBytes) ??
    textProblem("jobResponse.op", response.op) ??
    textProblem("jobResponse.change", response.change) ??
    (typeof response.state === "string" ? undefined : new InvalidInput({ field: "jobResponse.state", message: "jobResponse.state must be a string" }))
  if (refused) return refused
  const { key, refused: badKey } = checkedKeys(schema)
  const { id, scope, orderId, state } = response
  const doc = key("jobResponse", { id })
  const keys = {
    doc,
    list: key("jobResponseList", { scope }),
    state: state === "" ? doc : key("jobResponseByState", { scope, state }),
    order: key("jobResponseByOrder", { orderId }),
    ofOrder: key("jobResponseOfOrder", { orderId }),
    scopes: key("scopes", {}),
    changes: key("changes", { scope }),
    failed: key("jobResponseFailed", { scope }),
    orders: key("jobOrderList", { scope })
  }
  const changesChannel = key("nudge", { kind: "changes" })
  const keyRefused = badKey()
  if (keyRefused) return keyRefused
  return { keys, scope, id, state, orderId, startTime: response.startTime, endTime: response.endTime ?? response.startTime, doc: response.doc, op: response.op, change: response.change, changesChannel }
}
