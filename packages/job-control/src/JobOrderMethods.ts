import { Effect, Result, Option } from "effect"
import {
  type DecodedJobOrder,
  decodeJobOrderRecord,
  encodeJobOrderRecord,
  encodeOrigin,
  type JobOrder,
  type JobState,
  JobStates,
  type Method,
  normalizedName,
  type Origin,
  priorityOf,
  retiresJob,
  ReturnStatus,
  transition,
  withComment
} from "@microdcs/job-state"
import { type ClaimAdmission, JobOrderDao, type LimitReached, StateMoved, Valkey, type ValkeyService } from "@microdcs/store"
import { describeMissing, makeAcceptance } from "./Acceptance.js"
import { type Answer, refused, succeeded, unableToAccept, unknownJobOrder } from "./Answer.js"
import type { Command } from "./Command.js"
import type { DoneInWrite } from "./DoneInWrite.js"
import { JobControlOptions, type JobControlSettings } from "./JobControlOptions.js"
import type { JobOrderReferences } from "./References.js"

type JobOrderCommand = Extract<Command, { readonly _tag: "JobOrderMethod" }>
type StateCommand = Extract<Command, { readonly _tag: "StateMethod" }>

/** A transition of an existing job order: a state method, or Update with its new document. */
interface Move {
  readonly method: Method
  readonly scope: string
  readonly jobOrderId: string
  readonly comment: string | undefined
  /** Update only: the replacement document and its references, checked before the put. */
  readonly update?: { readonly jobOrder: JobOrder; readonly references: JobOrderReferences }
  /** The write's operation id, derived from the request, so a redelivery can find its own write. */
  readonly op: string | undefined
  /** Who asked for it, with the method's comment: recorded in the change entry and the record. */
  readonly origin: Origin
}

type Acceptance = Effect.Success<typeof makeAcceptance>

const limitMessage = (scope: string, e: LimitReached) =>
  `scope ${scope} accepts at most ${e.limit} job order(s) and already holds ${e.count}`

/** What the job order methods work with. */
interface MethodDeps {
  readonly valkey: ValkeyService
  readonly jobOrders: JobOrderDao["Service"]
  readonly options: JobControlSettings
  readonly acceptance: Acceptance
}

/** The stored job order of `scope`; `undefined` when absent or in another scope (both are unknown here). */
const load = (deps: MethodDeps, id: string, scope: string) =>
  deps.jobOrders.get(id).pipe(
    Effect.map((doc) => (doc.scope === scope ? { version: doc.version, decoded: decodeJobOrderRecord(doc.doc) } : undefined)),
    Effect.catchTag("NotFound", () => Effect.succeed(undefined))
  )

const moved = (method: Method, scope: string, id: string, state: JobState, version: number): Answer =>
  succeeded({ JobOrderID: id }, [{ jobOrderId: id, scope, state: normalizedName(state), version, method }])

/**
 * A request processed again after its holder crashed between its write and its done mark: the
 * write carries the request's op id, so the first answer is given again instead of a refusal
 * ("already exists", "not allowed in this state") of the request's own effect. Asked only on
 * a refusal path, so the hot path pays nothing.
 */
const ownEarlierWrite = (deps: MethodDeps, id: string, op: string | undefined) =>
  op === undefined
    ? Effect.succeed(Option.none<number>())
    : deps.jobOrders.outcome(id, op).pipe(Effect.catchTag("InvalidInput", () => Effect.succeed(Option.none<number>())))

const alreadyExists = (id: string) => unableToAccept(id, "AlreadyExists", `job order ${id} already exists`)

// Positional arguments, no record: these run once per request.

/** The create-only put of a new job order in its first state, landing the request's done mark with it when `done` is given. */
const create = (deps: MethodDeps, command: JobOrderCommand, target: JobState, limit: number, op: string | undefined, origin: Origin, done?: DoneInWrite<Answer>) => {
  const { jobOrder, scope, method } = command
  const id = jobOrder.JobOrderID
  const input = {
    id,
    scope,
    doc: encodeJobOrderRecord(jobOrder, target, command.comment, origin),
    priority: priorityOf(jobOrder),
    expectedVersion: 0,
    change: method,
    limit,
    op,
    origin: encodeOrigin(origin)
  }
  // A create is always version 1: its answer, and the done mark keeping it, are known before the write.
  const answer = moved(method, scope, id, target, 1)
  const mark = done?.mark(answer)
  const write =
    done === undefined || mark === undefined
      ? Effect.map(deps.jobOrders.put(input), ({ version }) => moved(method, scope, id, target, version))
      : Effect.map(deps.jobOrders.createMarkingDone(input, mark), () => {
          done.landed(mark)
          return answer
        })
  return write.pipe(
    Effect.catchTags({
      // Another request created it between our read and the put.
      VersionConflict: () => Effect.succeed(alreadyExists(id)),
      ScopeConflict: () => Effect.succeed(alreadyExists(id)),
      LimitReached: (e) => Effect.succeed(unableToAccept(id, "LimitReached", limitMessage(scope, e)))
    })
  )
}

/** Store and StoreAndStart: create-only, so an existing id is refused, never overwritten. */
const store = (deps: MethodDeps, command: JobOrderCommand, op: string | undefined, requester: Origin, admitted: ClaimAdmission | undefined, done?: DoneInWrite<Answer>) =>
  Effect.gen(function* () {
    const { jobOrder, scope, method } = command
    const origin = withComment(requester, command.comment)
    const id = jobOrder.JobOrderID
    // Whether the id is taken and the scope's limit, in one round trip (or read with the dedupe
    // claim already): judged in the old order (an existing id first, then the references, then the limit).
    const read = yield* (admitted === undefined ? deps.jobOrders.admission(id, scope) : Effect.fromResult(admitted))
    const { exists, limit: storedLimit } = read
    // Store and StoreAndStart leave InitialState by definition; a Left would be a broken table.
    const moves = transition(JobStates.InitialState, method)
    if (Result.isFailure(moves)) return yield* Effect.die(moves.failure)
    const target = moves.success
    if (exists) {
      const landed = yield* ownEarlierWrite(deps, id, op)
      return Option.isSome(landed) ? moved(method, scope, id, target, landed.value) : alreadyExists(id)
    }
    // Read one after the other: forking fibers to send them together cost more CPU (about
    // 60 µs per Effect.all) than the round trips it saved.
    const missing = yield* deps.acceptance.missingReferences(scope, command.references, read.unknownWorkMasters)
    if (missing.length > 0) return unableToAccept(id, "UnknownReference", describeMissing(missing))
    const limit = Option.getOrElse(storedLimit, () => deps.options.defaultAcceptanceLimit)
    return yield* create(deps, command, target, limit, op, origin, done)
  })

/** The versioned put of a move from the version read; `undefined` when that version moved on. */
const putMove = (deps: MethodDeps, move: Move, version: number, stored: DecodedJobOrder, next: JobState, limit: number) => {
  const { method, scope, jobOrderId: id } = move
  const jobOrder = move.update?.jobOrder ?? stored.jobOrder
  return deps.jobOrders
    .put({
      id,
      scope,
      doc: encodeJobOrderRecord(jobOrder, next, move.comment ?? stored.comment, move.origin),
      priority: priorityOf(jobOrder),
      expectedVersion: version,
      change: method,
      op: move.op,
      origin: encodeOrigin(move.origin),
      // Counted only when the id is not listed yet, so a listed job never counts itself twice.
      limit,
      ...(retiresJob(method) ? { retainMs: deps.options.retentionMs } : {})
    })
    .pipe(
      Effect.map((put): Answer | undefined => moved(method, scope, id, next, put.version)),
      Effect.catchTags({
        VersionConflict: () => Effect.succeed(undefined),
        ScopeConflict: () => Effect.succeed(unknownJobOrder(id, scope)),
        LimitReached: (e) => Effect.succeed(unableToAccept(id, "LimitReached", limitMessage(scope, e)))
      })
    )
}

/** One attempt of a move on the version just read; `undefined` when that version moved on. */
const attempt = (deps: MethodDeps, move: Move, limit: number, references: { checked: boolean }) =>
  Effect.gen(function* () {
    const { method, scope, jobOrderId: id } = move
    const current = yield* load(deps, id, scope)
    if (current === undefined) return unknownJobOrder(id, scope)
    if (Result.isFailure(current.decoded)) {
      return refused(ReturnStatus.INVALID_JOB_ORDER_STATUS, "MalformedJobOrder", `job order ${id}: ${current.decoded.failure.message}`, {
        JobOrderID: id
      })
    }
    const stored = current.decoded.success
    const next = transition(stored.state, method)
    if (Result.isFailure(next)) {
      const landed = yield* ownEarlierWrite(deps, id, move.op)
      if (Option.isSome(landed)) return succeeded({ JobOrderID: id }, [])
      return refused(ReturnStatus.INVALID_JOB_ORDER_STATUS, "InvalidJobOrderStatus", `job order ${id}: ${next.failure.message}`, { JobOrderID: id })
    }
    if (move.update && !references.checked) {
      const missing = yield* deps.acceptance.missingReferences(scope, move.update.references)
      if (missing.length > 0) return unableToAccept(id, "UnknownReference", describeMissing(missing))
      references.checked = true
    }
    return yield* putMove(deps, move, current.version, stored, next.success, limit)
  })

/** Re-reads and retries while another writer moves the job order between our read and put (bounded). */
const apply = (deps: MethodDeps, move: Move) =>
  Effect.gen(function* () {
    const { options } = deps
    const limit = move.update ? yield* deps.acceptance.limitOf(move.scope) : 0
    const references = { checked: false }
    for (let n = 0; n < options.maxAttempts; n++) {
      const answer = yield* attempt(deps, move, limit, references)
      if (answer !== undefined) return answer
    }
    const key = yield* Effect.orDie(deps.valkey.key("jobOrder", { id: move.jobOrderId }))
    return yield* new StateMoved({ key, attempts: options.maxAttempts })
  })

/**
 * `origin`: who sent the request; `admitted`: the admission reads made with its claim, for Store
 * and StoreAndStart; `done`: the request's done mark, landed with the create when there is one.
 */
const jobOrderMethod = (deps: MethodDeps, command: JobOrderCommand, op: string | undefined, origin: Origin, admitted?: ClaimAdmission, done?: DoneInWrite<Answer>) =>
  command.method === "Update"
    ? apply(deps, {
        method: "Update",
        scope: command.scope,
        jobOrderId: command.jobOrder.JobOrderID,
        comment: command.comment,
        update: { jobOrder: command.jobOrder, references: command.references },
        op,
        origin: withComment(origin, command.comment)
      })
    : store(deps, command, op, origin, admitted, done)

const stateMethod = (deps: MethodDeps, command: StateCommand, op: string | undefined, origin: Origin) =>
  apply(deps, { method: command.method, scope: command.scope, jobOrderId: command.jobOrderId, comment: command.comment, op, origin: withComment(origin, command.comment) })

/**
 * The job order methods. Every change is one versioned put of the job order with
 * the method as the change word, the target state taken from the shared transition table.
 */
export const makeJobOrderMethods = Effect.gen(function* () {
  const deps: MethodDeps = { valkey: yield* Valkey, jobOrders: yield* JobOrderDao, options: yield* JobControlOptions, acceptance: yield* makeAcceptance }
  return {
    jobOrderMethod: (command: JobOrderCommand, op: string | undefined, origin: Origin, admitted?: ClaimAdmission, done?: DoneInWrite<Answer>) =>
      jobOrderMethod(deps, command, op, origin, admitted, done),
    stateMethod: (command: StateCommand, op: string | undefined, origin: Origin) => stateMethod(deps, command, op, origin)
  } as const
})
