import { Data, Effect, Result, Context, Layer } from "effect"
import { dedupeHash, KeyPartError } from "@microdcs/keyschema"
import {
  type DedupeAdmissionRead,
  dedupeClaim,
  dedupeClaimAdmission,
  type DedupeClaimReply,
  dedupeDone,
  type DedupeDoneReply,
  dedupeRelease,
  dedupeTakeover
} from "@microdcs/lua-scripts"
import { Busy, type ConnectionError, InvalidInput, type LeaseLost, type WrongType } from "./Errors.js"
import { admissionFrom, type JobOrderAdmission } from "./Admission.js"
import { claimTokenHolder } from "./ClaimToken.js"
import { keyPartProblem } from "./DocumentInput.js"
import { validateText } from "./Input.js"
import { wrongTypeError } from "./TypeGuard.js"
import { Valkey, type ValkeyService } from "./Valkey.js"
import { dedupeKeyOf, type DoneMark, doneMark, leaseLost, positiveMsProblem } from "./DoneMark.js"
import { command } from "./RawDoor.js"

/**
 * The admission reads of a job order, made by {@link DedupeStore}'s `claimWithAdmission` once it
 * held the claim: what `JobOrderDao.admission` would have read next, or its `WrongType`.
 */
export type ClaimAdmission = Result.Result<JobOrderAdmission, WrongType>

/** What a claim found: the caller may process the event, or it was processed before. */
export type ClaimResult = Data.TaggedEnum<{
  /**
   * The caller holds the lease. `alreadyHeld`: it held it before this call (the lease was not
   * extended). `admission`: the job order's admission reads, from `claimWithAdmission` only.
   * `takenOverFrom`: the dead holder whose claim the caller took over (no admission reads then).
   */
  Claimed: {
    readonly key: string
    readonly alreadyHeld: boolean
    readonly admission?: ClaimAdmission | undefined
    readonly takenOverFrom?: string | undefined
  }
  /** The event was processed; skip it. `reply`: what was kept with the done mark, if anything. */
  Done: { readonly key: string; readonly reply: string | undefined }
}>
export const ClaimResult = Data.taggedEnum<ClaimResult>()

type NotClaimed = Exclude<DedupeClaimReply, { readonly status: "claimed" }>

/** A claim's reply other than "claimed" and other than a busy one to take over: processed before (with its kept reply), held, or the wrong type. */
const notClaimed = (key: string, reply: NotClaimed): Effect.Effect<ClaimResult, Busy | WrongType> => {
  switch (reply.status) {
    case "done":
      return Effect.succeed(ClaimResult.Done({ key, reply: reply.reply ?? undefined }))
    case "busy":
      return Effect.fail(new Busy({ key, remainingMs: reply.remainingMs }))
    case "wrongtype":
      return Effect.fail(wrongTypeError(reply))
  }
}

type ClaimError = Busy | WrongType | InvalidInput | ConnectionError

/** The dedupe key of an event, or why its source or id cannot name one (synchronous, for the hot path). */
const dedupeKey = (valkey: ValkeyService, source: string, id: string): Effect.Effect<string, InvalidInput> =>
  Effect.gen(function* () {
    yield* validateText("source", source)
    yield* validateText("id", id)
    return yield* valkey.key("dedupe", { hash: dedupeHash(source, id) })
  })

/**
 * A claim found busy: when its token names a holder whose liveness key is gone (it died), the
 * claim is taken over in one script step that re-checks both; else `Busy` (with the time to
 * look again: the lease's end, or the holder's liveness end when that comes first).
 */
const takeOverOrNot = (
  valkey: ValkeyService,
  key: string,
  reply: NotClaimed,
  token: string,
  leaseMs: number
): Effect.Effect<ClaimResult, Busy | WrongType | ConnectionError> => {
  if (reply.status !== "busy" || reply.token === null) return notClaimed(key, reply)
  const found = reply.token
  const holder = claimTokenHolder(found)
  // A token that names no holder (or none a key can name) is freed by its lease's end alone.
  const holderKey = holder === undefined ? undefined : valkey.keys.key("dedupeHolder", { holder })
  if (typeof holderKey !== "string") return notClaimed(key, reply)
  return Effect.flatMap(valkey.script(dedupeTakeover, { dedupe: key, holder: holderKey }, { found, token, leaseMs }), (taken) => {
    switch (taken.status) {
      case "taken":
        return Effect.succeed(ClaimResult.Claimed({ key, alreadyHeld: false, takenOverFrom: holder }))
      case "claimed":
        return Effect.succeed(ClaimResult.Claimed({ key, alreadyHeld: taken.alreadyHeld }))
      case "busy":
        return Effect.fail(new Busy({ key, remainingMs: taken.remainingMs }))
      default:
        return notClaimed(key, taken)
    }
  })
}

/**
 * Takes the lease on an event, or learns it is done; `Busy` while another token holds it. A
 * claim whose holder (named in its token, see `claimToken`) has no liveness key any more is
 * taken over at once: that holder died and will never mark it done.
 */
const claim = (valkey: ValkeyService, source: string, id: string, token: string, leaseMs: number): Effect.Effect<ClaimResult, ClaimError> =>
  // Every job control request claims and marks done: the checks are plain synchronous code,
  // so the call is one script step and the reply mapping.
  Effect.suspend((): Effect.Effect<ClaimResult, ClaimError> => {
    const key = dedupeKeyOf(valkey, source, id)
    if (typeof key !== "string") return Effect.fail(key)
    const problem = keyPartProblem("token", token) ?? positiveMsProblem("leaseMs", leaseMs)
    if (problem) return Effect.fail(problem)
    return Effect.flatMap(valkey.script(dedupeClaim, { dedupe: key }, { token, leaseMs }), (reply) =>
      reply.status === "claimed" ? Effect.succeed(ClaimResult.Claimed({ key, alreadyHeld: reply.alreadyHeld })) : takeOverOrNot(valkey, key, reply, token, leaseMs)
    )
  })

/** The `JobOrderDao.admission` answer from the script's reads (an unparsable limit is corruption, as there). */
const admissionOf = (read: DedupeAdmissionRead, limitKey: string, workMasters: ReadonlyArray<string>): Effect.Effect<ClaimAdmission> => {
  if (read.status === "wrongtype") return Effect.succeed(Result.fail(wrongTypeError(read)))
  return Effect.map(admissionFrom(read.exists, read.limit, limitKey), (admission) =>
    Result.succeed(
      workMasters.length === 0 ? admission : { ...admission, unknownWorkMasters: workMasters.filter((_, i) => read.knownWorkMasters[i] !== true) }
    )
  )
}

/** More work masters than this are read by the processor itself: one script call stays small. */
const MAX_CLAIM_WORK_MASTERS = 64

/** The job order a Store or StoreAndStart creates: its id, scope and the work masters it names. */
export interface AdmissionTarget {
  readonly id: string
  readonly scope: string
  /** Read with the claim when given (at most {@link MAX_CLAIM_WORK_MASTERS}, each a key part). */
  readonly workMasters?: ReadonlyArray<string> | undefined
}

// The work masters the claim reads: none when they cannot all be asked in one small call.
const claimWorkMasters = (jobOrder: AdmissionTarget): ReadonlyArray<string> => {
  const ids = jobOrder.workMasters ?? []
  return ids.length > MAX_CLAIM_WORK_MASTERS || ids.some((id) => keyPartProblem("workMaster", id) !== undefined) ? [] : ids
}

/**
 * {@link claim} for a request that stores job order `jobOrder.id` in `jobOrder.scope`: once
 * claimed, the same script reads the job order's admission (whether the id is taken, the
 * scope's limit, which of `jobOrder.workMasters` are listed), so the processor skips those
 * round trips. A job order id or scope that names no key claims as `claim` does (no admission):
 * the processor's own read then refuses it.
 */
const claimWithAdmission = (
  valkey: ValkeyService,
  source: string,
  id: string,
  token: string,
  leaseMs: number,
  jobOrder: AdmissionTarget
): Effect.Effect<ClaimResult, ClaimError> =>
  Effect.suspend((): Effect.Effect<ClaimResult, ClaimError> => {
    const docKey = valkey.keys.key("jobOrder", { id: jobOrder.id })
    const limitKey = valkey.keys.key("jobAcceptance", { scope: jobOrder.scope })
    const listKey = valkey.keys.key("workMasterList", { scope: jobOrder.scope })
    if (docKey instanceof KeyPartError || limitKey instanceof KeyPartError || listKey instanceof KeyPartError) return claim(valkey, source, id, token, leaseMs)
    const key = dedupeKeyOf(valkey, source, id)
    if (typeof key !== "string") return Effect.fail(key)
    const problem = keyPartProblem("token", token) ?? positiveMsProblem("leaseMs", leaseMs)
    if (problem) return Effect.fail(problem)
    const keys = { dedupe: key, jobOrder: docKey, jobAcceptance: limitKey, workMasterList: listKey }
    const workMasters = claimWorkMasters(jobOrder)
    return Effect.flatMap(valkey.script(dedupeClaimAdmission, keys, { token, leaseMs, workMasters }), (reply) =>
      reply.status === "claimed"
        ? Effect.map(admissionOf(reply.admission, limitKey, workMasters), (admission) => ClaimResult.Claimed({ key, alreadyHeld: reply.alreadyHeld, admission }))
        : takeOverOrNot(valkey, key, reply, token, leaseMs)
    )
  })

/** The done mark's reply: `LeaseLost` when the caller no longer holds the lease. */
const doneReply = (mark: DoneMark, reply: DedupeDoneReply): Effect.Effect<void, LeaseLost | WrongType> => {
  if (reply.status === "wrongtype") return Effect.fail(wrongTypeError(reply))
  if (reply.status === "lost") return Effect.fail(leaseLost(mark.key, mark.token, reply.stored))
  return Effect.void
}

/**
 * Marks the event processed for `ttlMs`, keeping `storedReply` (a JSON text, at most the
 * document size limit) with the mark for duplicates; `LeaseLost` when the caller no longer
 * holds the lease.
 */
const markDone = (
  valkey: ValkeyService,
  source: string,
  id: string,
  token: string,
  ttlMs: number,
  storedReply?: string
): Effect.Effect<void, LeaseLost | WrongType | InvalidInput | ConnectionError> =>
  Effect.suspend((): Effect.Effect<void, LeaseLost | WrongType | InvalidInput | ConnectionError> => {
    const mark = doneMark(valkey, source, id, token, ttlMs, storedReply)
    if (mark instanceof InvalidInput) return Effect.fail(mark)
    return Effect.flatMap(valkey.script(dedupeDone, { dedupe: mark.key }, { token, ttlMs, reply: storedReply }), (reply) => doneReply(mark, reply))
  })

/** Gives the caller's own lease back (processing failed); `true` when it was deleted. */
const release = (valkey: ValkeyService, source: string, id: string, token: string): Effect.Effect<boolean, WrongType | InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    const key = yield* dedupeKey(valkey, source, id)
    yield* validateText("token", token)
    const reply = yield* valkey.script(dedupeRelease, { dedupe: key }, { token })
    return reply.status === "ok" ? reply.released : yield* wrongTypeError(reply)
  })

/** PTTL of whatever the key holds (lease or done), floored at 0: 0 when absent or without TTL. */
const leaseRemaining = (valkey: ValkeyService, source: string, id: string): Effect.Effect<number, InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    const key = yield* dedupeKey(valkey, source, id)
    // PTTL is -2 for a missing key and -1 for one without TTL; both mean "nothing to wait for".
    const ms = yield* command(valkey, "dedupe lease remaining", (c) => c.pttl(key))
    return Math.max(0, ms)
  })

/**
 * CloudEvent deduplication: `ce:dedupe:{hash}` holds
 * `processing:{token}` while one consumer works on an event, then `done` for the done TTL, or
 * `done:{reply}` when the caller kept its reply with the mark, so a duplicate
 * can be answered the same way again.
 */
export class DedupeStore extends Context.Service<DedupeStore>()("@microdcs/store/DedupeStore", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    return {
      claim: (source: string, id: string, token: string, leaseMs: number) => claim(valkey, source, id, token, leaseMs),
      claimWithAdmission: (source: string, id: string, token: string, leaseMs: number, jobOrder: AdmissionTarget) =>
        claimWithAdmission(valkey, source, id, token, leaseMs, jobOrder),
      markDone: (source: string, id: string, token: string, ttlMs: number, storedReply?: string) => markDone(valkey, source, id, token, ttlMs, storedReply),
      /**
       * The done mark `markDone` would write, checked, for a write that lands it with its own
       * effect (`JobOrderDao.createMarkingDone`); `InvalidInput` as `markDone` would refuse it.
       */
      doneMark: (source: string, id: string, token: string, ttlMs: number, storedReply?: string) => doneMark(valkey, source, id, token, ttlMs, storedReply),
      release: (source: string, id: string, token: string) => release(valkey, source, id, token),
      leaseRemaining: (source: string, id: string) => leaseRemaining(valkey, source, id)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
