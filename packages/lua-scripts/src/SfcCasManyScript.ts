import type { PutJobOrderArgs } from "./JobOrderScripts.js"
import { searchFactArgs } from "./SearchFactArgs.js"
import { asArray, asInteger, asText, UnexpectedReply } from "./Reply.js"
import { decodeCasOk, type SfcCasOk } from "./SfcCasReply.js"
import { keyedWaitKeys } from "./SfcKeyedWaitArgs.js"
import type { SfcCompareAndSetArgs } from "./SfcScripts.js"
import { defineScript } from "./ScriptDescriptor.js"
import { decodeWriteReply, type WriteReply } from "./WriteReply.js"

/**
 * One job of {@link sfcCompareAndSetMany}: what {@link SfcCompareAndSetArgs} says for one job,
 * with the job's four named keys, any number of applied-event keys, and whether its entries nudge.
 */
export interface SfcCasManyJob extends Omit<SfcCompareAndSetArgs, "event" | "nudgeChannel"> {
  readonly keys: { readonly state: string; readonly work: string; readonly due: string; readonly active: string }
  /** The applied-event keys this write records (each set to the job id); a held one refuses the job. */
  readonly events: ReadonlyArray<string>
  /** `false`: the job's entries are appended without a nudge (the writer handles them itself). */
  readonly nudge: boolean
  /** A job order move written with the job when its version still matches (`put-joborder-7`'s put, never a refusal of the job). */
  readonly jobOrderMove?: SfcJobOrderMove | undefined
  /** A job response created with the job unless it exists (`put-jobresponse-12`'s create, never a refusal of the job). */
  readonly jobResponse?: SfcJobResponseCreate | undefined
}

/** A job response created with an SFC job (see `lib/jobresponse-create.lua`). */
export interface SfcJobResponseCreate {
  readonly keys: {
    readonly doc: string
    readonly list: string
    /** The by-state set, or the doc key when `state` is `""`. */
    readonly state: string
    readonly order: string
    readonly ofOrder: string
    readonly scopes: string
    readonly changes: string
    /** The scope's failed set (`jobresponse:failed:{scope}`). */
    readonly failed: string
    /** The scope's job order list (`joborder:list:{scope}`): an Aborted response joins the failed set only while its order is listed. */
    readonly orders: string
  }
  readonly scope: string
  readonly id: string
  /** The normalized state, `""` = not indexed. */
  readonly state: string
  readonly orderId: string
  readonly startTime: number
  /** Epoch ms: the failed-set score while the state is a failure state. */
  readonly endTime: number
  readonly doc: string
  readonly op: string
  readonly change: string
  readonly changesChannel: string
}

/**
 * A job order move written with an SFC job (see `lib/joborder-move.lua`): `put-joborder-7`'s put
 * of the move (its `expectedVersion`, the version the move was computed from, is > 0), with no
 * limit and no retention.
 */
export interface SfcJobOrderMove extends Pick<PutJobOrderArgs, "expectedVersion" | "scope" | "id" | "priority" | "doc" | "op" | "change" | "origin" | "facts"> {
  readonly keys: { readonly doc: string; readonly list: string; readonly scopes: string; readonly changes: string; readonly search: string }
  /** The change stream's nudge channel. */
  readonly changesChannel: string
}

export interface SfcCompareAndSetManyArgs {
  /** Published once per scope with the scope when nudging entries were appended; `""` = none at all. */
  readonly nudgeChannel: string
  /** The lifetime of every applied-event key, in ms. */
  readonly eventLifetimeMs: number
  /** The jobs, in the order they are applied; a job id at most once. */
  readonly jobs: ReadonlyArray<SfcCasManyJob>
}

/** One job's reply: that of `sfc-cas`, except that a duplicate names which of the job's events (0-based) was held. */
export type SfcCasManyJobReply =
  | SfcCasOk
  | { readonly status: "duplicate"; readonly eventIndex: number; readonly jobId: string }
  | Extract<WriteReply, { readonly status: "conflict" | "scope" | "wrongtype" }>

const manyName = "sfc-cas-many"
const decodeFailure = decodeWriteReply(manyName, ["conflict", "scope", "wrongtype"])

const decodeJob = (raw: unknown): SfcCasManyJobReply => {
  const reply = asArray(manyName, raw)
  const status = asText(manyName, reply[0])
  if (status === "ok") return decodeCasOk(manyName, reply)
  if (status === "duplicate") return { status, eventIndex: asInteger(manyName, reply[1]), jobId: asText(manyName, reply[2]) }
  return decodeFailure(raw)
}

const decodeMany = (raw: unknown): ReadonlyArray<SfcCasManyJobReply> => {
  if (!Array.isArray(raw)) throw new UnexpectedReply(manyName, raw)
  return raw.map(decodeJob)
}

/** One job's keys, in the order of its block of KEYS. */
const jobKeys = (job: SfcCasManyJob): ReadonlyArray<string> => [
  job.keys.state,
  job.keys.work,
  job.keys.due,
  job.keys.active,
  ...job.events,
  ...job.waitsJoin.map((w) => w.key),
  ...(job.waitsMove ?? []).map((w) => w.key),
  ...job.waitsLeave,
  ...keyedWaitKeys(job.keyedJoin),
  ...keyedWaitKeys(job.keyedLeave),
  ...(job.directSend?.pointerKeys ?? []),
  ...(job.directSend?.jobOrderKey != null ? [job.directSend.jobOrderKey] : []),
  ...(job.jobOrderMove ? [job.jobOrderMove.keys.doc, job.jobOrderMove.keys.list, job.jobOrderMove.keys.scopes, job.jobOrderMove.keys.changes, job.jobOrderMove.keys.search] : []),
  ...(job.jobResponse ? responseKeys(job.jobResponse) : [])
]

const responseKeys = ({ keys }: SfcJobResponseCreate): ReadonlyArray<string> => [
  keys.doc, keys.list, keys.state, keys.order, keys.ofOrder, keys.scopes, keys.changes, keys.failed, keys.orders
]

const responseArgs = (r: SfcJobResponseCreate): ReadonlyArray<string | number> => [
  r.scope,
  r.id,
  r.state,
  r.orderId,
  r.startTime,
  r.doc,
  r.op,
  r.change,
  r.changesChannel,
  r.endTime
]

const moveArgs = (move: SfcJobOrderMove): ReadonlyArray<string | number> => [
  move.expectedVersion,
  move.scope,
  move.id,
  move.priority,
  move.doc,
  move.op,
  move.change,
  move.origin,
  move.changesChannel,
  ...searchFactArgs(move.facts)
]

/** One job's block of ARGV, as the script header lays it out. */
const jobArgs = (job: SfcCasManyJob): ReadonlyArray<string | number> => [
  job.expectedVersion,
  job.scope,
  job.jobId,
  job.op,
  job.doc,
  job.due === null ? "" : job.due,
  job.active ? "1" : "0",
  job.nudge ? "1" : "0",
  job.events.length,
  job.waitsJoin.length,
  (job.waitsMove ?? []).length,
  job.waitsLeave.length,
  (job.directSend?.pointerKeys ?? []).length,
  job.directSend?.pointerLifetimeMs ?? 0,
  job.directSend?.jobOrderKey != null ? "1" : "0",
  job.jobOrderMove ? (job.jobOrderMove.facts ? "2" : "1") : "0",
  job.jobResponse ? "1" : "0",
  (job.keyedJoin ?? []).length,
  (job.keyedLeave ?? []).length,
  ...job.waitsJoin.map((w) => w.since),
  ...(job.waitsMove ?? []).map((w) => w.since),
  ...(job.keyedJoin ?? []).flatMap((w) => [w.place, w.since, w.move === true ? "1" : "0"]),
  ...(job.keyedLeave ?? []).map((w) => w.place),
  job.entries.length,
  ...job.entries.flatMap((pairs) => [pairs.length * 2, ...pairs.flat()]),
  ...(job.jobOrderMove ? moveArgs(job.jobOrderMove) : []),
  ...(job.jobResponse ? responseArgs(job.jobResponse) : []),
  ...(job.directSend?.jobOrderKey != null ? [job.directSend.heldJobOrderVersion ?? 0] : [])
]

/**
 * `sfc-cas` for many jobs in one call: each job checked and written on its own (a refused job
 * writes nothing, the others are written), one nudge per scope. No fixed keys: KEYS are each
 * job's block (state, work, due, active, events, joined, moved and left waits sets, joined and left keyed waits, pointers,
 * the job order key, the move's and the response's keys), in job order. The reply has one entry per job, in order.
 */
export const sfcCompareAndSetMany = defineScript({
  file: "sfc-cas-many-0+.lua",
  keys: [],
  tailKeys: (a: SfcCompareAndSetManyArgs) => a.jobs.flatMap(jobKeys),
  encodeArgs: (a: SfcCompareAndSetManyArgs) => [a.nudgeChannel, a.jobs.length, a.eventLifetimeMs, ...a.jobs.flatMap(jobArgs)],
  decodeReply: decodeMany
})
