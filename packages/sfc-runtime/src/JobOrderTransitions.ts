import { Effect, Result, Context, Layer } from "effect"
import {
  decodeJobOrderRecord,
  type DecodedJobOrder,
  encodeJobOrderRecord,
  encodeOrigin,
  ENGINE_ORIGIN,
  isInternal,
  type JobState,
  normalizedName,
  priorityOf,
  transition,
  transitionTable,
  type Trigger
} from "@microdcs/job-state"
import { type ConnectionError, type InvalidInput, JobOrderDao, type SfcJobOrderMoveInput, type SfcJobOrderRead, StateMoved, type WrongType } from "@microdcs/store"
import { BoundedMap } from "./BoundedMap.js"

const MAX_ATTEMPTS = 10
/** The engine's moves (Run, Complete, the Abort of a failed job) name it as their origin. */
const ENGINE_ORIGIN_TEXT = encodeOrigin(ENGINE_ORIGIN)

/** Job orders one process keeps in memory (the ones it read or moved last). */
const CACHED_JOB_ORDERS = 5_000

export interface LoadedJobOrder extends DecodedJobOrder {
  readonly scope: string
  readonly version: number
}

export type TransitionOutcome =
  | { readonly _tag: "Applied"; readonly from: string; readonly to: string }
  | { readonly _tag: "Refused"; readonly from: string }
  | { readonly _tag: "Missing" }

/** The job orders and what this process keeps of them. */
interface TransitionDeps {
  readonly jobOrders: JobOrderDao["Service"]
  // The job orders this process read or moved last, with their version: a move starts from
  // here instead of re-reading (Run after the start's read, Complete after Run). The put is
  // versioned, so one the MES moved meanwhile conflicts and is re-read; a move the cached
  // state refuses (or finds done) is only believed from a fresh read.
  readonly cache: BoundedMap<string, LoadedJobOrder>
}

/** Decodes a job order document read at `version` and holds it as the copy (`undefined`: unreadable, and no copy is held). */
const hold = (cache: TransitionDeps["cache"], id: string, scope: string, version: number, doc: string): LoadedJobOrder | undefined => {
  const decoded = decodeJobOrderRecord(doc)
  if (Result.isFailure(decoded)) {
    cache.delete(id)
    return undefined
  }
  const loaded = { ...decoded.success, scope, version }
  cache.set(id, loaded)
  return loaded
}

/** The job order with its decoded state; `undefined` when it does not exist or is unreadable. */
const load = ({ jobOrders, cache }: TransitionDeps, id: string): Effect.Effect<LoadedJobOrder | undefined, InvalidInput | WrongType | ConnectionError> =>
  jobOrders.get(id).pipe(
    Effect.map((doc) => hold(cache, id, doc.scope, doc.version, doc.doc)),
    Effect.catchTag("NotFound", () => Effect.sync(() => void cache.delete(id)))
  )

/** Many job orders in one pipelined read, each as `load` gives it (`undefined`: missing or unreadable). */
const loadMany = ({ jobOrders, cache }: TransitionDeps, ids: ReadonlyArray<string>) =>
  Effect.map(jobOrders.getMany(ids), (docs) => {
    const found = new Map<string, LoadedJobOrder>()
    for (const doc of docs) {
      const loaded = hold(cache, doc.id, doc.scope, doc.version, doc.doc)
      if (loaded) found.set(doc.id, loaded)
    }
    for (const id of ids) if (!found.has(id)) cache.delete(id)
    return found
  })

/** The versioned put of one move: `true` when it landed, `false` when the job order moved meanwhile (re-read next). */
const writeMove = (
  { jobOrders, cache }: TransitionDeps,
  id: string,
  current: LoadedJobOrder,
  next: JobState,
  trigger: Trigger,
  op: string | undefined,
  reason: string | undefined
) =>
  jobOrders
    .put({
      id,
      scope: current.scope,
      doc: encodeJobOrderRecord(current.jobOrder, next, reason ?? current.comment, ENGINE_ORIGIN),
      priority: priorityOf(current.jobOrder),
      expectedVersion: current.version,
      change: trigger,
      origin: ENGINE_ORIGIN_TEXT,
      ...(op !== undefined ? { op } : {})
    })
    .pipe(
      Effect.map((put) => {
        if (next.main === "Ended" || next.main === "Aborted") cache.delete(id)
        else cache.set(id, { ...current, state: next, version: put.version, origin: ENGINE_ORIGIN })
        return true
      }),
      Effect.catchTag("VersionConflict", () => Effect.sync(() => cache.delete(id)).pipe(Effect.as(false))),
      Effect.catchTags({ ScopeConflict: (e) => Effect.die(e), LimitReached: (e) => Effect.die(e) })
    )

/** A move computed from the cached job order, to be written with an execution's write (`SfcStateDao.compareAndSetMany`'s `jobOrderMove`). */
export interface PlannedMove {
  readonly id: string
  readonly op: string
  readonly input: SfcJobOrderMoveInput
  readonly current: LoadedJobOrder
  readonly next: JobState
}

/** The move of `trigger` as `writeMove` would put it, from the cached job order; `undefined` when none is cached or its state refuses the trigger. */
/** `reason`: why a failed job is aborted, kept as the job order's comment (else the comment stays). */
const planMove = ({ cache }: TransitionDeps, id: string, trigger: Trigger, op: string, reason?: string): PlannedMove | undefined => {
  const current = cache.get(id)
  if (current === undefined) return undefined
  const moved = transition(current.state, trigger)
  if (Result.isFailure(moved)) return undefined
  const next = moved.success
  const doc = encodeJobOrderRecord(current.jobOrder, next, reason ?? current.comment, ENGINE_ORIGIN)
  const input = { scope: current.scope, expectedVersion: current.version, doc, priority: priorityOf(current.jobOrder), change: trigger, op, origin: ENGINE_ORIGIN_TEXT }
  return { id, op, input, current, next }
}

/** What the write did with a planned move: `version` when it landed, else `undefined` (moved meanwhile, or not known): re-read next. */
const settleMove = ({ cache }: TransitionDeps, move: PlannedMove, version: number | undefined) => {
  if (version === undefined || move.next.main === "Ended" || move.next.main === "Aborted") cache.delete(move.id)
  else cache.set(move.id, { ...move.current, state: move.next, version, origin: ENGINE_ORIGIN })
}

/**
 * The main state of a job order as a write read it after itself (`SfcWritten.jobOrder`): from
 * the held copy when it is at the read's version (a version names one document, so the copy is
 * what was read: the read may have left the document out, and a write with several commands
 * decodes it once), else from the document the read carries, then held as the copy of that
 * version. `undefined`: the document does not decode; `false`: the read left the document out
 * and the copy moved on meanwhile (read the job order again).
 */
const mainAfterWrite = ({ cache }: TransitionDeps, id: string, scope: string, read: SfcJobOrderRead): string | undefined | false => {
  const held = cache.get(id)
  if (held?.version === read.version) return held.state.main
  if (read.doc === undefined) return false
  return hold(cache, id, scope, read.version, read.doc)?.state.main
}

/**
 * Applies a trigger. An internal trigger whose target the job order already has (a
 * redelivered outbox entry) counts as applied, so handlers stay idempotent.
 */
const apply = (
  deps: TransitionDeps,
  id: string,
  trigger: Trigger,
  op?: string,
  reason?: string
): Effect.Effect<TransitionOutcome, InvalidInput | WrongType | ConnectionError | StateMoved> =>
  Effect.gen(function* () {
    let cached = deps.cache.get(id)
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const fromCache = cached !== undefined
      const current = cached ?? (yield* load(deps, id))
      cached = undefined
      if (!current) return { _tag: "Missing" } as const
      const from = normalizedName(current.state)
      const moved = transition(current.state, trigger)
      if (Result.isFailure(moved) && fromCache) {
        attempt--
        continue
      }
      if (Result.isFailure(moved)) {
        // A redelivered internal trigger finds the job order where it put it.
        if (isInternal(trigger) && transitionTable[trigger].to === from) return { _tag: "Applied", from, to: from } as const
        return { _tag: "Refused", from } as const
      }
      if (yield* writeMove(deps, id, current, moved.success, trigger, op, reason)) return { _tag: "Applied", from, to: normalizedName(moved.success) } as const
    }
    return yield* new StateMoved({ key: id, attempts: MAX_ATTEMPTS })
  })

/**
 * Reads job orders and moves them with the shared state machine. Every move is a versioned put
 * with the trigger as the change word, so two concurrent moves never both win.
 */
export class JobOrderTransitions extends Context.Service<JobOrderTransitions>()("@microdcs/sfc/JobOrderTransitions", {
  make: Effect.gen(function* () {
    const deps: TransitionDeps = { jobOrders: yield* JobOrderDao, cache: new BoundedMap<string, LoadedJobOrder>(CACHED_JOB_ORDERS) }
    return {
      load: (id: string) => load(deps, id),
      /** Job orders by id in one read; the missing and unreadable ones are not in the map. */
      loadMany: (ids: ReadonlyArray<string>) => loadMany(deps, ids),
      /** `reason`: a failed job's, kept as the job order's comment on its Abort. */
      apply: (id: string, trigger: Trigger, op?: string, reason?: string) => apply(deps, id, trigger, op, reason),
      /** A move to write with an execution's write, from the cached job order (see {@link PlannedMove}). */
      planMove: (id: string, trigger: Trigger, op: string, reason?: string) => planMove(deps, id, trigger, op, reason),
      /** Tells the cache what became of a planned move: its new version, or `undefined` when it did not land. */
      settleMove: (move: PlannedMove, version: number | undefined) => settleMove(deps, move, version),
      /** The version of the job order's held copy, if any: a write's read of it may then leave the document out. */
      heldVersion: (id: string): number | undefined => deps.cache.get(id)?.version,
      /** The job order's held copy, if any (what this process last read or wrote of it). */
      held: (id: string): LoadedJobOrder | undefined => deps.cache.get(id),
      mainAfterWrite: (id: string, scope: string, read: SfcJobOrderRead) => mainAfterWrite(deps, id, scope, read)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
