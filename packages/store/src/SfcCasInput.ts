import { type KeyFamily, KeyPartError, type KeyParts, type KeySchema } from "@microdcs/keyschema"
import type { SfcCompareAndSetArgs, SfcEntryPairs, SfcJobOrderRead } from "@microdcs/lua-scripts"
import { documentProblem } from "./DocumentInput.js"
import { InvalidInput } from "./Errors.js"
import { cachedKey } from "./KeyCache.js"
import type { SfcJobOrderMoveInput } from "./SfcJobOrderMove.js"
import type { SfcJobResponseInput } from "./SfcJobResponseCreate.js"
import type { ValkeyService } from "./Valkey.js"
import { checkedKeys } from "./CheckedKeys.js"
import { type KeyedWaitsChecked, keyedWaitArgs, keyedWaitsChecked, type SfcKeyedWait, type SfcKeyedWaitJoin } from "./SfcKeyedWaits.js"
import {
  casVersionProblem,
  entriesChecked,
  textProblem,
  timeProblem,
  type WaitJoin,
  waitMovesChecked,
  waitsChecked
} from "./SfcStateInput.js"

/** How long an applied event is remembered (`sfc:event:...`, 1 h). */
export const EVENT_LIFETIME_MS = 60 * 60 * 1000

export interface SfcCompareAndSet {
  readonly jobId: string
  readonly scope: string
  /** 0 = create only, n > 0 = the version the engine read. */
  readonly expectedVersion: number
  /** The whole execution state as JSON text; the codec belongs to the engine. */
  readonly doc: string
  /** Operation id stored with the write; default a new UUID. */
  readonly op?: string | undefined
  /** Work and outbox entries for `sfc:work:{scope}`; each carries at least `type`. */
  readonly entries: ReadonlyArray<Readonly<Record<string, string>>>
  /** The job's next deadline (epoch ms), or `null` for none. */
  readonly due: number | null
  /** Whether the execution is not terminal (member of `sfc:active:{scope}`). */
  readonly active: boolean
  readonly waitsAdd: ReadonlyArray<WaitJoin>
  /** Waits sets the job stays in with a new wait start (a wait ended and another began); default none. */
  readonly waitsMove?: ReadonlyArray<WaitJoin> | undefined
  readonly waitsRemove: ReadonlyArray<string>
  /** Keyed waits (by correlation key, see `SfcKeyedWaits.ts`) the job joins, moves to a later start in, and leaves; default none. */
  readonly keyedWaitsAdd?: ReadonlyArray<SfcKeyedWaitJoin> | undefined
  readonly keyedWaitsMove?: ReadonlyArray<SfcKeyedWaitJoin> | undefined
  readonly keyedWaitsRemove?: ReadonlyArray<SfcKeyedWait> | undefined
  /** The event this write applies; a second write with the same event is a `DuplicateEvent`. */
  readonly appliedEvent?: { readonly source: string; readonly id: string } | undefined
  /**
   * The writer sends the write's commands itself: the same script points each correlation id at
   * the job (`sfc:correlation:{id}`, for `pointerTtlMs`) and, with `readJobOrder`, returns the job
   * order's document as it is after the write (the gate of the send), saving the round trips.
   */
  readonly directSend?: {
    readonly correlationIds: ReadonlyArray<string>
    readonly pointerTtlMs: number
    readonly readJobOrder: boolean
    /**
     * With `readJobOrder`: the job order version the writer holds (a copy it keeps). When the
     * job order is still at that version, the reply gives the version without the document.
     */
    readonly heldJobOrderVersion?: number | undefined
  } | undefined
  /**
   * `false`: append the entries without nudging the work stream's consumers (default `true`).
   * For a write whose entries the writer carries out itself (its direct sends, moves and
   * response): they need no handler now, and the consumers' fallback poll still reads them (the
   * recovery path after a crash, and for whatever did not land from the writer).
   */
  readonly nudge?: boolean | undefined
}

/** What a CAS wrote. */
export interface SfcWritten {
  readonly version: number
  readonly op: string
  /**
   * Stream ids of the appended entries, in order; `null` when the reply was lost and the op
   * check showed the write landed (the entries are in the stream, their ids are not known here).
   */
  readonly entryIds: ReadonlyArray<string> | null
  /**
   * With `directSend.readJobOrder`: the job order after the write, `null` when it does not exist;
   * absent when not read (or the reply was lost). Its `doc` is `undefined` when its version is
   * `directSend.heldJobOrderVersion` or the one the write's `jobOrderMove` made (the writer has
   * those documents).
   */
  readonly jobOrder?: SfcJobOrderRead | null
  /** With a `jobOrderMove`: the job order's version after the move, 0 when it was not written; absent when the reply was lost. */
  readonly jobOrderVersion?: number
  /** With a `jobResponse`: 1 when it was created, 0 when not; absent when the reply was lost. */
  readonly responseVersion?: number
}

/** The keys of a scope every CAS names, built once per scope (see `cachedKey`). */
export interface ScopeKeys {
  readonly work: (scope: string) => string | KeyPartError
  readonly due: (scope: string) => string | KeyPartError
  readonly active: (scope: string) => string | KeyPartError
}

/** What the CAS needs besides its input, built once per service: the connection, the nudge channel and the scope keys. */
export interface CasDeps {
  readonly valkey: ValkeyService
  readonly nudgeChannel: string
  readonly scopeKeys: ScopeKeys
}

/** {@link ScopeKeys} of a key schema, each memoised per scope. */
export const scopeKeysOf = (schema: KeySchema): ScopeKeys => ({
  work: cachedKey((scope) => schema.key("sfcWork", { scope })),
  due: cachedKey((scope) => schema.key("sfcDue", { scope })),
  active: cachedKey((scope) => schema.key("sfcActive", { scope }))
})

/** What the single and the batched CAS share: everything of a job's write but its applied events. */
export type SfcCasCommon = Omit<SfcCompareAndSet, "appliedEvent">

/** An applied event, by its source and id. */
export interface SfcAppliedEvent {
  readonly source: string
  readonly id: string
}

/** A job's CAS in a batch (`compareAndSetMany`): one write may apply several events. */
export interface SfcCompareAndSetMany extends SfcCasCommon {
  /** The events this write applies; if any was applied before, the job is a `DuplicateEvent` (with its `eventIndex`). */
  readonly appliedEvents?: ReadonlyArray<SfcAppliedEvent> | undefined
  /** A move of the job's job order written with the state when its version still matches (see `SfcJobOrderMoveInput`). */
  readonly jobOrderMove?: SfcJobOrderMoveInput | undefined
  /** A job response created with the state unless it exists (see `SfcJobResponseInput`). */
  readonly jobResponse?: SfcJobResponseInput | undefined
}

/** A job's four named keys. */
export interface SfcCasKeys {
  readonly state: string
  readonly work: string
  readonly due: string
  readonly active: string
}

/** A checked job: its keys, its applied-event keys and the script arguments both scripts share. */
export interface PreparedJob {
  readonly keys: SfcCasKeys
  readonly eventKeys: ReadonlyArray<string>
  readonly args: Omit<SfcCompareAndSetArgs, "event" | "nudgeChannel">
}

/** A checked CAS: the script's keys and arguments, ready to send. */
export interface PreparedCas {
  readonly keys: SfcCasKeys
  readonly args: SfcCompareAndSetArgs
  /** The applied event's key, for the DuplicateEvent error. */
  readonly eventKey: string | undefined
}

/** Why a CAS's version, document, op or due time is refused, or `undefined`. */
const scalarProblem = (input: SfcCasCommon, maxBytes: number): InvalidInput | undefined =>
  casVersionProblem(input.expectedVersion) ??
  documentProblem("doc", input.doc, maxBytes) ??
  (input.op !== undefined ? textProblem("op", input.op) : undefined) ??
  (input.due !== null ? timeProblem("due", input.due) : undefined)

/** Why a direct send's pointer lifetime or held job order version is refused, or `undefined`. */
const directSendProblem = (directSend: SfcCompareAndSet["directSend"]): InvalidInput | undefined => {
  if (directSend === undefined) return undefined
  const ttl = directSend.pointerTtlMs
  if (!(Number.isSafeInteger(ttl) && ttl > 0)) {
    return new InvalidInput({ field: "directSend.pointerTtlMs", message: "directSend.pointerTtlMs must be a positive integer (ms)" })
  }
  const held = directSend.heldJobOrderVersion
  return held !== undefined && !(Number.isSafeInteger(held) && held >= 0)
    ? new InvalidInput({ field: "directSend.heldJobOrderVersion", message: "directSend.heldJobOrderVersion must be a non-negative integer" })
    : undefined
}

/** The script arguments of a checked job; `key` builds each key (and remembers the first part refused). */
const jobArgs = (
  input: SfcCasCommon,
  op: string,
  entries: ReadonlyArray<SfcEntryPairs>,
  waits: { readonly join: ReadonlyArray<WaitJoin>; readonly leave: ReadonlyArray<string> },
  moves: ReadonlyArray<WaitJoin>,
  keyed: KeyedWaitsChecked,
  key: <F extends KeyFamily>(family: F, parts: KeyParts<F>) => string
): PreparedJob["args"] => {
  const { scope, jobId } = input
  const waitKey = (typeId: string) => key("sfcWaits", { scope, typeId })
  const keyedArgs = (wait: SfcKeyedWait) => keyedWaitArgs(key, scope, wait)
  return {
    expectedVersion: input.expectedVersion,
    scope,
    jobId,
    op,
    doc: input.doc,
    due: input.due,
    active: input.active,
    waitsJoin: waits.join.map((w) => ({ key: waitKey(w.typeId), since: w.since })),
    waitsMove: moves.map((w) => ({ key: waitKey(w.typeId), since: w.since })),
    waitsLeave: waits.leave.map(waitKey),
    // A moved keyed wait is joined with its new start: counted only if the job was not in it.
    keyedJoin: [...keyed.add.map((w) => ({ ...keyedArgs(w), since: w.since })), ...keyed.move.map((w) => ({ ...keyedArgs(w), since: w.since, move: true }))],
    keyedLeave: keyed.remove.map(keyedArgs),
    entries,
    directSend: input.directSend
      ? {
          pointerKeys: input.directSend.correlationIds.map((correlationId) => key("sfcCorrelation", { correlationId })),
          pointerLifetimeMs: input.directSend.pointerTtlMs,
          jobOrderKey: input.directSend.readJobOrder ? key("jobOrder", { id: jobId }) : null,
          heldJobOrderVersion: input.directSend.heldJobOrderVersion
        }
      : undefined
  }
}

/** The first problem of the plain values (no keys built yet), or the checked entries, waits and moves. */
const valuesChecked = (input: SfcCasCommon, maxBytes: number) => {
  const found = scalarProblem(input, maxBytes)
  if (found) return found
  const entries = entriesChecked(input.entries, maxBytes)
  if (entries instanceof InvalidInput) return entries
  const waits = waitsChecked(input.waitsAdd, input.waitsRemove)
  if (waits instanceof InvalidInput) return waits
  const moves = waitMovesChecked(input.waitsMove ?? [], waits.leave)
  if (moves instanceof InvalidInput) return moves
  const keyed = keyedWaitsChecked(input.keyedWaitsAdd, input.keyedWaitsMove, input.keyedWaitsRemove)
  if (keyed instanceof InvalidInput) return keyed
  return directSendProblem(input.directSend) ?? { entries, waits, moves, keyed }
}

/**
 * Checks one job's write and builds its keys and arguments in plain code (the engine's hot
 * path: one Effect per write, not one per key): the checks of `prepareCas`, for any number of
 * applied events. Every check runs before anything is sent, so a refused input writes nothing.
 */
export const prepareJob = (
  schema: KeySchema,
  scopeKeys: ScopeKeys,
  input: SfcCasCommon,
  events: ReadonlyArray<SfcAppliedEvent>,
  maxBytes: number,
  op: string
): PreparedJob | InvalidInput => {
  const values = valuesChecked(input, maxBytes)
  if (values instanceof InvalidInput) return values
  // The first key part the schema refuses; the keys are built on, and the result is dropped.
  const { key, checked, refused } = checkedKeys(schema)
  const { scope, jobId } = input
  const keys = { state: key("sfcState", { jobId }), work: checked(scopeKeys.work(scope)), due: checked(scopeKeys.due(scope)), active: checked(scopeKeys.active(scope)) }
  const eventKeys = events.map((event) => key("sfcEvent", { scope, source: event.source, id: event.id }))
  const args = jobArgs(input, op, values.entries, values.waits, values.moves, values.keyed, key)
  return refused() ?? { keys, eventKeys, args }
}

/** Checks a CAS and builds its keys and arguments (see {@link prepareJob}). */
export const prepareCas = (
  schema: KeySchema,
  scopeKeys: ScopeKeys,
  input: SfcCompareAndSet,
  maxBytes: number,
  nudgeChannel: string,
  op: string
): PreparedCas | InvalidInput => {
  const job = prepareJob(schema, scopeKeys, input, input.appliedEvent ? [input.appliedEvent] : [], maxBytes, op)
  if (job instanceof InvalidInput) return job
  const eventKey = job.eventKeys[0]
  const event = eventKey === undefined ? null : { key: eventKey, lifetimeMs: EVENT_LIFETIME_MS }
  return { keys: job.keys, args: { ...job.args, nudgeChannel: input.nudge === false ? "" : nudgeChannel, event }, eventKey }
}
