import { Effect, Option, Context, Layer, Result } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import { sfcCompareAndSet, type SfcCompareAndSetReply, sfcDelete } from "@microdcs/lua-scripts"
import {
  type ConnectionError,
  DuplicateEvent,
  InvalidInput,
  NotFound,
  type ScopeConflict,
  type StateMoved,
  type VersionConflict,
  type WrongType
} from "./Errors.js"
import {
  newOperationId,
  landed,
  operationLanded,
  parseDocumentHash,
  resolveUnknownOutcome,
  writeOutcome,
  type StoredDocument,
  validateExpectedVersion
} from "./Document.js"
import { keyProblem } from "./DocumentInput.js"
import { readForWrite, retryWhileMoved } from "./IndexPrecondition.js"
import { checkedKeys } from "./CheckedKeys.js"
import { hashes } from "./KeyReads.js"
import {
  type CasDeps,
  EVENT_LIFETIME_MS,
  prepareCas,
  scopeKeysOf,
  type SfcAppliedEvent,
  type SfcCompareAndSet,
  type SfcCompareAndSetMany,
  type SfcWritten
} from "./SfcCasInput.js"
import { compareAndSetMany, type SfcCasManyError, type SfcCasManyResult } from "./SfcCasMany.js"
import type { SfcJobOrderMoveInput } from "./SfcJobOrderMove.js"
import type { SfcJobResponseInput } from "./SfcJobResponseCreate.js"
import { keyedWaitArgs, keyedWaiting, keyedWaitRefsChecked, keyPlaces, type SfcKeyedWait } from "./SfcKeyedWaits.js"
import { checkTime, checkWaits } from "./SfcStateInput.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey, type ValkeyService } from "./Valkey.js"
import { settleWrite, writeFailure } from "./WriteReplies.js"

export type { SfcKeyedWait, SfcKeyedWaitJoin } from "./SfcKeyedWaits.js"
export { EVENT_LIFETIME_MS, type SfcAppliedEvent, type SfcCasManyError, type SfcCasManyResult, type SfcCompareAndSet, type SfcCompareAndSetMany, type SfcJobOrderMoveInput, type SfcJobResponseInput, type SfcWritten }
export type { SfcJobOrderRead } from "@microdcs/lua-scripts"

export interface DeleteSfcState {
  readonly jobId: string
  /** Every type id whose waits set the job may be in. */
  readonly waits: ReadonlyArray<string>
  /** Every keyed wait the job may be in (default none). */
  readonly keyedWaits?: ReadonlyArray<SfcKeyedWait> | undefined
  /** -1 (default) = unconditional, n > 0 = must match. */
  readonly expectedVersion?: number | undefined
}

export type SfcWriteError = VersionConflict | ScopeConflict | WrongType | DuplicateEvent | InvalidInput | ConnectionError

const pairsToScored = <K extends string>(flat: ReadonlyArray<string>, name: K) => {
  const out: Array<{ readonly jobId: string } & Readonly<Record<K, number>>> = []
  for (let i = 0; i < flat.length; i += 2) out.push({ jobId: flat[i]!, [name]: Number(flat[i + 1]) } as never)
  return out
}

const casResult = (
  reply: SfcCompareAndSetReply,
  input: SfcCompareAndSet,
  keys: { readonly state: string; readonly event: string | undefined },
  op: string
): Effect.Effect<SfcWritten, VersionConflict | ScopeConflict | WrongType | DuplicateEvent> => {
  switch (reply.status) {
    case "ok":
      return Effect.succeed({
        version: reply.version,
        op,
        entryIds: reply.entryIds,
        ...(reply.jobOrder !== undefined ? { jobOrder: reply.jobOrder } : {})
      })
    case "duplicate":
      return Effect.fail(new DuplicateEvent({ key: keys.event ?? keys.state, jobId: reply.jobId }))
    default:
      return Effect.fail(writeFailure(reply, { key: keys.state, expectedVersion: input.expectedVersion, requestedScope: input.scope }))
  }
}

/** Compares the version and applies the engine's computed change in one atomic step. */
const compareAndSet = (deps: CasDeps, input: SfcCompareAndSet): Effect.Effect<SfcWritten, SfcWriteError> =>
  Effect.suspend((): Effect.Effect<SfcWritten, SfcWriteError> => {
    const { valkey } = deps
    const op = input.op ?? newOperationId()
    // Checked and built in plain code: bad input fails here, before anything is sent.
    const prepared = prepareCas(valkey.keys, deps.scopeKeys, input, valkey.maxDocumentBytes, deps.nudgeChannel, op)
    if (prepared instanceof InvalidInput) return Effect.fail(prepared)
    const state = prepared.keys.state
    const write = valkey
      .script(sfcCompareAndSet, prepared.keys, prepared.args)
      .pipe(Effect.flatMap((reply) => casResult(reply, input, { state, event: prepared.eventKey }, op)))
    // The SFC state has no change stream: only the document itself can answer.
    const check = (elapsedMs: number) =>
      writeOutcome(valkey, { key: state, op, expectedVersion: input.expectedVersion, elapsedMs }).pipe(
        Effect.map((outcome) => (outcome._tag === "Landed" ? landed<SfcWritten>({ version: outcome.value, op, entryIds: null }) : outcome))
      )
    return resolveUnknownOutcome(write, check)
  })

const get = (valkey: ValkeyService, jobId: string): Effect.Effect<StoredDocument, NotFound | WrongType | InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    const key = yield* valkey.key("sfcState", { jobId })
    const hash = yield* typedCommand(valkey, "get sfc state", key, "hash", (c) => c.hgetall(key))
    return parseDocumentHash(jobId, hash) ?? (yield* new NotFound({ key, message: `no execution state for job ${jobId}` }))
  })

/** One job's state in a `getMany`: the state (`None` when the job has none), or why it could not be read. */
export type SfcStateRead = Result.Result<Option.Option<StoredDocument>, WrongType | InvalidInput>

/** The states of `jobIds` in one pipelined round trip (HGETALL each), in order; a job id no key can name is `InvalidInput` and is not read. */
const getMany = (valkey: ValkeyService, jobIds: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<SfcStateRead>, ConnectionError> =>
  Effect.suspend(() => {
    const results: Array<SfcStateRead> = []
    const keys: Array<string> = []
    const read: Array<number> = []
    jobIds.forEach((jobId, i) => {
      const key = valkey.keys.key("sfcState", { jobId })
      if (key instanceof KeyPartError) {
        results[i] = Result.fail(keyProblem(key))
        return
      }
      read.push(i)
      keys.push(key)
    })
    return Effect.map(hashes(valkey, keys), (hashReads) => {
      hashReads.forEach((hash, k) => {
        const i = read[k]!
        results[i] = Result.map(hash, (fields) => Option.fromNullishOr(parseDocumentHash(jobIds[i]!, fields)))
      })
      return results
    })
  })

/** Job ids of the scope whose execution is not terminal, in no particular order. */
const listActive = (valkey: ValkeyService, scope: string): Effect.Effect<ReadonlyArray<string>, WrongType | InvalidInput | ConnectionError> =>
  valkey
    .key("sfcActive", { scope })
    .pipe(Effect.flatMap((key) => typedCommand(valkey, "list active sfc jobs", key, "set", (c) => c.smembers(key))))

/** Jobs of the scope whose next deadline is at or before `now`, earliest first, at most `limit`. */
const dueJobs = (
  valkey: ValkeyService,
  scope: string,
  now: number,
  limit: number
): Effect.Effect<ReadonlyArray<{ readonly jobId: string; readonly due: number }>, WrongType | InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    yield* checkTime("now", now)
    const count = yield* positiveCount("limit", limit)
    const key = yield* valkey.key("sfcDue", { scope })
    const flat = yield* typedCommand(valkey, "due sfc jobs", key, "zset", (c) =>
      c.zrangebyscore(key, "-inf", now, "WITHSCORES", "LIMIT", 0, count)
    )
    return pairsToScored(flat, "due")
  })

/** Jobs waiting for events of `typeId`, longest waiting first (at most `limit`, default all). */
const waiting = (
  valkey: ValkeyService,
  scope: string,
  typeId: string,
  limit?: number
): Effect.Effect<ReadonlyArray<{ readonly jobId: string; readonly since: number }>, WrongType | InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    const stop = limit === undefined ? -1 : (yield* positiveCount("limit", limit)) - 1
    const key = yield* valkey.key("sfcWaits", { scope, typeId })
    const flat = yield* typedCommand(valkey, "waiting sfc jobs", key, "zset", (c) => c.zrange(key, 0, stop, "WITHSCORES"))
    return pairsToScored(flat, "since")
  })

/** The job that applied the event `(source, id)` in this scope within the last hour, if any. */
const eventApplied = (
  valkey: ValkeyService,
  scope: string,
  source: string,
  id: string
): Effect.Effect<Option.Option<string>, WrongType | InvalidInput | ConnectionError> =>
  valkey.key("sfcEvent", { scope, source, id }).pipe(
    Effect.flatMap((key) => typedCommand(valkey, "sfc event applied", key, "string", (c) => c.get(key))),
    Effect.map(Option.fromNullishOr)
  )

/** The delete's keyed waits as the script takes them, checked. */
const keyedWaitsOf = (valkey: ValkeyService, scope: string, waits: ReadonlyArray<SfcKeyedWait> | undefined) =>
  Effect.suspend(() => {
    const checked = keyedWaitRefsChecked("keyedWaits", waits)
    if (checked instanceof InvalidInput) return Effect.fail(checked)
    const { key, refused } = checkedKeys(valkey.keys)
    const args = checked.map((wait) => keyedWaitArgs(key, scope, wait))
    const problem = refused()
    return problem ? Effect.fail(problem) : Effect.succeed(args)
  })

/** One delete attempt: the index keys depend on the stored scope, so it is read, passed and re-checked by the script. */
const deleteAttempt = (valkey: ValkeyService, input: DeleteSfcState, state: string, typeIds: ReadonlyArray<string>, expectedVersion: number, n: number) =>
  Effect.gen(function* () {
    const notFound = `no execution state for job ${input.jobId}`
    const scope = yield* readForWrite(
      state,
      n,
      typedCommand(valkey, "read sfc scope", state, "hash", (c) => c.hget(state, "scope"))
    )
    if (scope === null) return yield* new NotFound({ key: state, message: notFound })
    const due = yield* valkey.key("sfcDue", { scope })
    const active = yield* valkey.key("sfcActive", { scope })
    const waits = yield* Effect.forEach(typeIds, (typeId) => valkey.key("sfcWaits", { scope, typeId }))
    const keyed = yield* keyedWaitsOf(valkey, scope, input.keyedWaits)
    const reply = yield* valkey.script(sfcDelete, { state, due, active }, { expectedVersion, scope, jobId: input.jobId, waits, keyed })
    return yield* settleWrite(reply, { key: state, expectedVersion, requestedScope: scope, notFound })
  })

/**
 * Removes the state and its due, active and waits entries (the waits sets named by the
 * caller). A retry after an unknown outcome that had landed gets `NotFound`: the state is gone.
 */
const remove = (
  valkey: ValkeyService,
  input: DeleteSfcState
): Effect.Effect<{ readonly version: number }, NotFound | VersionConflict | StateMoved | WrongType | InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    const expectedVersion = input.expectedVersion ?? -1
    yield* validateExpectedVersion(expectedVersion)
    if (expectedVersion === 0) {
      return yield* new InvalidInput({ field: "expectedVersion", message: "a delete takes -1 (unconditional) or the stored version" })
    }
    const { leave: typeIds } = yield* checkWaits([], input.waits)
    const state = yield* valkey.key("sfcState", { jobId: input.jobId })
    return { version: yield* retryWhileMoved(state, (n) => deleteAttempt(valkey, input, state, typeIds, expectedVersion, n)) }
  })

/** The unknown-outcome check: `Some(version)` when the last write of the job's state carries `op`. */
const outcome = (valkey: ValkeyService, jobId: string, op: string): Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError> =>
  valkey.key("sfcState", { jobId }).pipe(Effect.flatMap((key) => operationLanded(valkey, key, op)))

/** SFC execution state: one versioned document per job, changed only by the CAS script. */
export class SfcStateDao extends Context.Service<SfcStateDao>()("@microdcs/store/SfcStateDao", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const cas: CasDeps = { valkey, nudgeChannel: valkey.keys.key("nudge", { kind: "sfc" }) as string, scopeKeys: scopeKeysOf(valkey.keys) }
    return {
      compareAndSet: (input: SfcCompareAndSet) => compareAndSet(cas, input),
      /** Many jobs' CAS in one script call: each job's result on its own, in order (see `SfcCasMany.ts`). */
      compareAndSetMany: (inputs: ReadonlyArray<SfcCompareAndSetMany>) => compareAndSetMany(cas, inputs),
      get: (jobId: string) => get(valkey, jobId),
      getMany: (jobIds: ReadonlyArray<string>) => getMany(valkey, jobIds),
      listActive: (scope: string) => listActive(valkey, scope),
      due: (scope: string, now: number, limit: number) => dueJobs(valkey, scope, now, limit),
      waiting: (scope: string, typeId: string, limit?: number) => waiting(valkey, scope, typeId, limit),
      /** The places the scope's keyed waits for `typeId` read their key at (`attribute.<name>`, `data.<path>`). */
      keyPlaces: (scope: string, typeId: string) => keyPlaces(valkey, scope, typeId),
      /** Jobs whose keyed wait for the type expects the key, longest waiting first (at most `limit`). */
      keyedWaiting: (scope: string, wait: SfcKeyedWait, limit: number) => keyedWaiting(valkey, scope, wait, limit),
      eventApplied: (scope: string, source: string, id: string) => eventApplied(valkey, scope, source, id),
      delete: (input: DeleteSfcState) => remove(valkey, input),
      outcome: (jobId: string, op: string) => outcome(valkey, jobId, op)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}

const positiveCount = (field: string, value: number): Effect.Effect<number, InvalidInput> =>
  Number.isSafeInteger(value) && value > 0
    ? Effect.succeed(value)
    : Effect.fail(new InvalidInput({ field, message: `${field} must be a positive integer` }))
