import { Effect } from "effect"
import { createJobOrderDone, type CreateJobOrderDoneReply } from "@microdcs/lua-scripts"
import { newOperationId, type Written } from "./Document.js"
import { checkedKeys } from "./CheckedKeys.js"
import { documentProblem, numberProblem } from "./DocumentInput.js"
import { type DoneMark, leaseLost } from "./DoneMark.js"
import { type ConnectionError, InvalidInput, type LeaseLost, type LimitReached, type ScopeConflict, type UnknownOutcome, type VersionConflict, type WrongType } from "./Errors.js"
import type { PutJobOrder } from "./JobOrderInput.js"
import { jobOrderSearchFacts } from "./JobOrderSearchFacts.js"
import { writeOutcome } from "./OutcomeCheck.js"
import type { ValkeyService } from "./Valkey.js"
import { type WriteContext, writeFailure } from "./WriteReplies.js"

export type CreateMarkingDoneError = VersionConflict | ScopeConflict | LimitReached | LeaseLost | WrongType | InvalidInput | ConnectionError
type Created = Effect.Effect<Written, CreateMarkingDoneError>

/** A create that passed its checks: the script's keys and arguments, and what its reply is judged against. */
interface CheckedCreate {
  readonly keys: {
    readonly doc: string
    readonly list: string
    readonly scopes: string
    readonly changes: string
    readonly dedupe: string
    readonly search: string
  }
  readonly args: Parameters<typeof createJobOrderDone.encodeArgs>[0]
  readonly context: WriteContext
}

/** The create's checks and keys, as the job order put and an SFC job's move make them; the mark was checked when it was built. */
const check = (valkey: ValkeyService, input: PutJobOrder, mark: DoneMark): CheckedCreate | InvalidInput => {
  const problem = numberProblem("priority", input.priority) ?? documentProblem("doc", input.doc, valkey.maxDocumentBytes)
  if (problem) return problem
  const { key, refused } = checkedKeys(valkey.keys)
  const doc = key("jobOrder", { id: input.id })
  const keys = { doc, list: key("jobOrderList", { scope: input.scope }), scopes: key("scopes", {}), changes: key("changes", { scope: input.scope }), dedupe: mark.key,
    search: key("jobOrderSearch", { scope: input.scope })
  }
  const nudgeChannel = key("nudge", { kind: "changes" })
  const keyRefused = refused()
  if (keyRefused) return keyRefused
  const { scope, id, priority } = input
  return {
    keys,
    args: {
      scope, id, priority, doc: input.doc, op: input.op ?? newOperationId(), change: input.change ?? "put", nudgeChannel,
      limit: input.limit ?? 0, origin: input.origin ?? "", token: mark.token, ttlMs: mark.ttlMs, reply: mark.reply ?? "",
      facts: jobOrderSearchFacts(input.doc)
    },
    context: { key: doc, expectedVersion: 0, requestedScope: scope }
  }
}

const settle = (checked: CheckedCreate, mark: DoneMark, reply: CreateJobOrderDoneReply): Created => {
  if (reply.status === "ok") return Effect.succeed({ version: reply.version, op: checked.args.op })
  if (reply.status === "lost") return Effect.fail(leaseLost(mark.key, mark.token, reply.stored))
  return Effect.fail(writeFailure(reply, checked.context))
}

/**
 * A lost reply: the op check says whether the create landed (and its mark with it: they are one
 * step), provably did not (sent again), or cannot tell (the `UnknownOutcome` stands).
 */
const inDoubt = (valkey: ValkeyService, checked: CheckedCreate, unknown: UnknownOutcome, elapsedMs: number, resend: Created): Created => {
  const { doc: key, changes } = checked.keys
  const record = { changes, kind: "joborder", id: checked.args.id }
  return writeOutcome(valkey, { key, op: checked.args.op, expectedVersion: 0, record, elapsedMs }).pipe(
    Effect.mapError(() => unknown),
    Effect.flatMap((outcome): Created => {
      if (outcome._tag === "Landed") return Effect.succeed({ version: outcome.value, op: checked.args.op })
      return outcome._tag === "NotLanded" ? resend : Effect.fail(unknown)
    })
  )
}

/**
 * Creates job order `input` (create only: its `expectedVersion` and `retainMs` are not used) and
 * writes the request's done `mark` in the same atomic step, while the mark's token still holds
 * the claim: one round trip where a put and a `markDone` take two. `LeaseLost` when the claim
 * is no longer the caller's, and then nothing is written; a refused create (`VersionConflict`,
 * `ScopeConflict`, `LimitReached`) writes nothing either, the mark included.
 */
export const createMarkingDone = (valkey: ValkeyService, input: PutJobOrder, mark: DoneMark): Created =>
  Effect.suspend((): Created => {
    const checked = check(valkey, input, mark)
    if (checked instanceof InvalidInput) return Effect.fail(checked)
    const write = Effect.flatMap(valkey.script(createJobOrderDone, checked.keys, checked.args), (reply) => settle(checked, mark, reply))
    const sentAt = performance.now()
    return write.pipe(Effect.catchTag("UnknownOutcome", (unknown) => inDoubt(valkey, checked, unknown, performance.now() - sentAt, write)))
  })
